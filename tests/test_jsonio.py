"""The bounded JSON reader: named errors for deep, huge, non-UTF-8, invalid and mistyped input; equal to
``json.loads`` on everything within its limits (property test)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kernel import jsonio
from engine.kernel.jsonio import JsonInputError

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_within_the_limits_it_reads_what_json_reads(value):
    text = json.dumps(value)
    assert jsonio.loads(text, "value") == json.loads(text)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet='[]{}"\\,:ab ', max_size=60))
def test_any_text_is_either_json_or_a_named_error(text):
    try:
        jsonio.loads(text, "probe")
    except JsonInputError as exc:
        assert str(exc).startswith("probe: ")


def test_brackets_inside_strings_do_not_count_as_depth():
    assert jsonio.nesting_depth(b'["[[[[", {"a": "}}}\\"[["}]') == 2
    assert jsonio.loads('"' + "[" * 5000 + '"', "s") == "[" * 5000


@pytest.mark.parametrize("opening", ["[", '{"a":'])
def test_deep_nesting_is_refused_by_name(opening):
    with pytest.raises(JsonInputError, match=r"manifest.json: JSON nested 3000 levels deep"):
        jsonio.loads(opening * 3000, "manifest.json")


def test_size_type_encoding_and_constants_are_checked(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"0," * 600 + b"0]")
    with pytest.raises(JsonInputError, match=r"big.json: 1,203 bytes of JSON is more than the 1,000 allowed"):
        jsonio.read(big, max_bytes=1000)
    with pytest.raises(JsonInputError, match="expected a JSON object, found array"):
        jsonio.read(big, expect=dict)
    with pytest.raises(JsonInputError, match="not UTF-8"):
        jsonio.loads(b'{"a": "\xff"}', "items.jsonl line 3")
    with pytest.raises(JsonInputError, match="NaN is not a JSON number"):
        jsonio.loads('{"score": NaN}', "row")
    with pytest.raises(JsonInputError, match=r"gallery.json: not valid JSON \(Expecting value at line 1"):
        jsonio.loads("[", "gallery.json")
    with pytest.raises(FileNotFoundError):
        jsonio.read(tmp_path / "absent.json")
