import json
import os
from pathlib import Path

import pytest

from engine.kernel.ontology import ATTRIBUTE_KEYS, LEVELS, ONTOLOGY, level_of, load_ontology
from engine.kernel.resources import resource_path

#: The reference ontology the shipped copy must equal, named by a setting; not shipped (README.md, "Where the real
#: clips come from").
REFERENCE_SETTING = "LINEUP_REFERENCE_ONTOLOGY"
REFERENCE = Path(os.environ[REFERENCE_SETTING]) if os.environ.get(REFERENCE_SETTING, "").strip() else None


@pytest.mark.skipif(REFERENCE is None or not REFERENCE.is_file(),
                    reason=f"{REFERENCE_SETTING} does not name the reference ontology.json")
def test_shipped_ontology_is_identical_to_the_reference():
    assert resource_path("ontology.json").read_bytes() == REFERENCE.read_bytes()


def test_eighteen_attributes_in_six_groups():
    assert len(ATTRIBUTE_KEYS) == 18
    assert len(ONTOLOGY.groups) == 6
    assert ONTOLOGY.group_of("shoe_type") == "footwear"
    assert LEVELS == ("UC", "C", "M", "F", "UF")


@pytest.mark.parametrize(
    ("count", "level"),
    [(0, None), (1, "UC"), (5, "UC"), (6, "C"), (8, "C"), (9, "M"), (11, "M"), (12, "F"), (14, "F"),
     (15, "UF"), (18, "UF")],
)
def test_level_boundaries(count, level):
    assert level_of(count) == level


def test_dependent_colours_count_only_with_their_item():
    attrs = {"hat_type": "none", "hat_color": "red", "carrying_type": "backpack", "carrying_color": "red"}
    assert ONTOLOGY.counted(attrs) == {"hat_type": "none", "carrying_type": "backpack", "carrying_color": "red"}
    assert ONTOLOGY.count(attrs) == 3


def test_validate_names_the_bad_key_and_value():
    with pytest.raises(ValueError, match="top_colour"):
        ONTOLOGY.validate({"top_colour": "red"})
    with pytest.raises(ValueError, match="maroon"):
        ONTOLOGY.validate({"top_color": "maroon"})
    ONTOLOGY.validate({"top_color": "red", "hat_type": "none"})


def test_malformed_ontology_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "ontology.json"
    data = json.loads(resource_path("ontology.json").read_text())
    data["groups"]["head"].append("tail_color")
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="groups and attributes disagree"):
        load_ontology(bad)
