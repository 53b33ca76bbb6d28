"""Trainer demo scripts (``resources/demos/*.json``): a titled case and a list of actions replayed through the
real window by ``app.play.ScriptPlayer``. Parsing only (no Qt): every problem names the file and the action.

    {"title": "…", "description": "…", "pace_ms": 1500,
     "target": "12",                                   # optional: ground-truth identity (demo worlds)
     "actions": [
       {"search": "a man", "keep": 0.5},                 # keep: ρ in (0, 1], a count ≥ 1, or {"threshold": s}
       {"search": "…", "sketch": "sketch.png", "ir": "ir.png", "level": "F"},   # files beside the script
       {"confirm": [1, 2]}, {"reject": [3]},           # ranks in the results grid, 1 = best
       {"confirm_relevant": 10},                       # ground-truth matches among the top 10 (demo worlds)
       {"confirm_relevant": 10, "expect_at_least": 0}, # default 1: finding fewer fails the play
       {"confirm_relevant": 5, "at_most": 1},          # only the best-ranked true match among the top 5
       {"follow": 12},                                 # follow the last confirmed item's sighting to the other
                                                       # cameras, 12 hours before and after (docs/methods.md §9)
       {"show": "sightings"},                          # open the sightings timeline and focus it
       {"search": "…", "expect_relevant_kept": 1},     # fails unless ≥ 1 true match survives the step
       {"note": "…"}, {"undo": true}, {"branch": 2},   # branch from step 2 of the active chain
       {"answer": "truth"},                            # answer the witness question on offer with the target's
                                                       # true value (demo worlds) and search; or a value ("red"),
       {"answer": "dont_know"},                        # or "don't know" (the key is hidden on the branch)
       {"pause": 800}]}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.state.query_spec import KeepRule, QueryInputError
from engine.kernel import jsonio
from engine.kernel.keep_rules import DEFAULT_RHO
from engine.kernel.ontology import LEVELS
from engine.kernel.query_modalities import taking

ACTION_KINDS = ("search", "confirm", "reject", "confirm_relevant", "follow", "show", "note", "undo", "branch",
                "pause", "answer")
SHOWN_PANES = ("sightings",)  # what a show action can bring forward
#: The answers a script can give to the witness question that are not a value of its key.
TRUTH, DONT_KNOW = "truth", "dont_know"
SEARCH_KEYS = frozenset({"search", "keep", "sketch", "ir", "level", "expect_relevant_kept"})
CONFIRM_RELEVANT_KEYS = frozenset({"confirm_relevant", "expect_at_least", "at_most"})
DEFAULT_PACE_MS = 1200
MAX_PAUSE_MS = 60_000
MAX_FOLLOW_HOURS = 744.0  # the follow window's own bound: 31 days


class PlayScriptError(ValueError):
    """A demo script that cannot be played; the message names the file, the action and the problem."""


@dataclass(frozen=True)
class PlayAction:
    kind: str
    text: str | None = None  # search text or note
    keep: KeepRule = field(default_factory=KeepRule)
    sketch: Path | None = None
    ir: Path | None = None
    level: str | None = None
    ranks: tuple[int, ...] = ()  # confirm / reject
    count: int = 0  # confirm_relevant: top N; branch: step number; pause: milliseconds
    #: the stated expectation: confirm_relevant: true matches among the top N (default 1); search: true matches
    #: kept by the step (None: none stated). Not met → the play fails, naming the action.
    expect: int | None = None
    at_most: int | None = None  # confirm_relevant: confirm only the best-ranked this many true matches
    hours: float = 0.0  # follow: the window before and after the followed sighting
    def describe(self) -> str:
        if self.kind == "search":
            images = [m.name for m in taking("image") if getattr(self, m.name, None)]
            parts = [f"“{self.text}”" if self.text else "", *images]
            return "search " + " + ".join(p for p in parts if p) + f" ({self.keep.describe()})"
        if self.kind in ("confirm", "reject"):
            return f"{self.kind} rank{'s' if len(self.ranks) > 1 else ''} {', '.join(map(str, self.ranks))}"
        if self.kind == "confirm_relevant":
            which = "true matches" if self.at_most is None else f"best {self.at_most} true match(es)"
            return f"confirm the {which} in the top {self.count}"
        if self.kind == "follow":
            return f"follow the last confirmed item to the other cameras, {self.hours:g} h before and after"
        if self.kind == "note":
            return f"note “{self.text}”"
        if self.kind == "branch":
            return f"branch from step {self.count}"
        if self.kind == "show":
            return f"show the {self.text}"
        if self.kind == "answer":
            return {TRUTH: "answer the witness question truthfully", DONT_KNOW: "the witness does not know"}.get(
                self.text, f"answer the witness question “{self.text}”")
        if self.kind == "pause":
            return f"pause {self.count} ms"
        return self.kind


@dataclass(frozen=True)
class PlayScript:
    title: str
    description: str
    pace_ms: int
    actions: tuple[PlayAction, ...]
    source: Path
    target: str | None = None  # ground-truth identity in the gallery (built worlds)


def _keep(value: Any, where: str) -> KeepRule:
    try:
        if isinstance(value, dict) and set(value) == {"threshold"}:
            return KeepRule("threshold", value["threshold"])
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise QueryInputError(f"keep must be a fraction, a count or {{\"threshold\": s}}, got {value!r}")
        if isinstance(value, int):  # a count (1 = the single best); fractions are written as floats
            return KeepRule("k", value)
        return KeepRule("rho", float(value))
    except QueryInputError as exc:
        raise PlayScriptError(f"{where}: {exc}") from None


def _file(base: Path, value: Any, where: str) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise PlayScriptError(f"{where}: a file name is needed, got {value!r}")
    path = Path(value) if Path(value).is_absolute() else base / value
    if not path.is_file():
        raise PlayScriptError(f"{where}: file not found: {path}")
    return path


def _positive_int(value: Any, where: str, what: str, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (maximum and value > maximum):
        limit = f" and at most {maximum}" if maximum else ""
        raise PlayScriptError(f"{where}: {what} must be a whole number ≥ 1{limit}, got {value!r}")
    return value


def _count(value: Any, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PlayScriptError(f"{where}: {what} must be a whole number ≥ 0, got {value!r}")
    return value


def parse_action(data: Any, base: Path, where: str) -> PlayAction:
    if not isinstance(data, dict) or not data:
        raise PlayScriptError(f"{where}: an action must be a non-empty object")
    kinds = [k for k in data if k in ACTION_KINDS]
    if len(kinds) != 1:
        raise PlayScriptError(f"{where}: exactly one of {list(ACTION_KINDS)} is needed, got {sorted(data)}")
    kind = kinds[0]
    value = data[kind]
    allowed = {"search": SEARCH_KEYS, "confirm_relevant": CONFIRM_RELEVANT_KEYS}.get(kind, {kind})
    extra = set(data) - allowed
    if extra:
        raise PlayScriptError(f"{where}: unknown key {sorted(extra)[0]!r} for a {kind} action")
    if kind == "search":
        text = value.strip() if isinstance(value, str) else None
        if value is not None and not isinstance(value, str):
            raise PlayScriptError(f"{where}: the search text must be a string (or null with a sketch or IR)")
        sketch = _file(base, data["sketch"], f"{where} sketch") if "sketch" in data else None
        ir = _file(base, data["ir"], f"{where} ir") if "ir" in data else None
        if not text and sketch is None and ir is None:
            raise PlayScriptError(f"{where}: a search needs a text, a sketch or an IR image")
        level = data.get("level")
        if level is not None and level not in LEVELS:
            raise PlayScriptError(f"{where}: level must be one of {list(LEVELS)}, got {level!r}")
        expect = data.get("expect_relevant_kept")
        if expect is not None:
            expect = _count(expect, where, "expect_relevant_kept")
        return PlayAction("search", text=text or None, keep=_keep(data.get("keep", DEFAULT_RHO), where), sketch=sketch,
                          ir=ir, level=level, expect=expect)
    if kind in ("confirm", "reject"):
        ranks = value if isinstance(value, list) else [value]
        if not ranks:
            raise PlayScriptError(f"{where}: {kind} needs at least one rank")
        return PlayAction(kind, ranks=tuple(_positive_int(r, where, "a rank") for r in ranks))
    if kind == "confirm_relevant":
        at_most = data.get("at_most")
        return PlayAction(kind, count=_positive_int(value, where, "the number of top items"),
                          expect=_count(data.get("expect_at_least", 1), where, "expect_at_least"),
                          at_most=None if at_most is None else _positive_int(at_most, where, "at_most"))
    if kind == "follow":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_FOLLOW_HOURS:
            raise PlayScriptError(f"{where}: follow takes the window in hours, a number in (0, {MAX_FOLLOW_HOURS:g}], "
                                  f"got {value!r}")
        return PlayAction(kind, hours=float(value))
    if kind == "show":
        if value not in SHOWN_PANES:
            raise PlayScriptError(f"{where}: show takes one of {list(SHOWN_PANES)}, got {value!r}")
        return PlayAction(kind, text=value)
    if kind == "note":
        if not isinstance(value, str) or not value.strip():
            raise PlayScriptError(f"{where}: a note needs non-empty text")
        return PlayAction(kind, text=value.strip())
    if kind == "undo":
        if value is not True:
            raise PlayScriptError(f"{where}: write the undo action as {{\"undo\": true}}")
        return PlayAction(kind)
    if kind == "branch":
        return PlayAction(kind, count=_positive_int(value, where, "the step number"))
    if kind == "answer":
        if not isinstance(value, str) or not value.strip():
            raise PlayScriptError(f"{where}: an answer is \"{TRUTH}\", \"{DONT_KNOW}\" or a value, got {value!r}")
        return PlayAction(kind, text=value.strip())
    return PlayAction(kind, count=_positive_int(value, where, "the pause (ms)", MAX_PAUSE_MS))


def parse_script(data: Any, source: Path) -> PlayScript:
    where = str(source)
    if not isinstance(data, dict):
        raise PlayScriptError(f"{where}: a demo script must be a JSON object")
    unknown = set(data) - {"title", "description", "pace_ms", "actions", "target"}
    if unknown:
        raise PlayScriptError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise PlayScriptError(f"{where}: 'title' must be a non-empty string")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise PlayScriptError(f"{where}: 'description' must be a string")
    pace = data.get("pace_ms", DEFAULT_PACE_MS)
    if isinstance(pace, bool) or not isinstance(pace, int) or not 0 <= pace <= MAX_PAUSE_MS:
        raise PlayScriptError(f"{where}: 'pace_ms' must be a whole number of milliseconds in 0…{MAX_PAUSE_MS}")
    actions = data.get("actions")
    if not isinstance(actions, list) or not actions:
        raise PlayScriptError(f"{where}: 'actions' must be a non-empty list")
    parsed = tuple(parse_action(a, source.parent, f"{where} action {i + 1}") for i, a in enumerate(actions))
    if parsed[0].kind != "search":
        raise PlayScriptError(f"{where} action 1: a script starts with a search")
    target = data.get("target")
    if target is not None and (isinstance(target, bool) or not isinstance(target, str | int)
                               or not str(target).strip()):
        raise PlayScriptError(f"{where}: 'target' must be a gallery identity (a string or a number)")
    return PlayScript(title.strip(), description, pace, parsed, source, None if target is None else str(target).strip())


def load_script(path: str | Path) -> PlayScript:
    """A script by path, or by name from ``resources/demos`` (``red_jacket`` → ``red_jacket.json``)."""
    path = Path(path)
    if not path.is_file() and len(path.parts) == 1:
        from engine.kernel.resources import resource_path

        try:
            path = resource_path("demos", path.name if path.suffix == ".json" else f"{path.name}.json")
        except FileNotFoundError:
            raise PlayScriptError(f"demo script not found: {path} (nor in resources/demos)") from None
    if not path.is_file():
        raise PlayScriptError(f"demo script not found: {path}")
    try:
        data = jsonio.read(path)
    except (OSError, jsonio.JsonInputError) as exc:
        raise PlayScriptError(f"{path}: not a readable JSON file ({exc})") from None
    return parse_script(data, path)
