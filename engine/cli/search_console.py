"""``lineup search``: a progressive search from the command line, as given steps or at a prompt.

Everything the user typed is checked before the model loads (empty steps, the keep rule, the level, unreadable
sketch/IR files, unknown cameras, times), then the gallery opens (missing or corrupt → error) and the
checkpoint is checked against it (views, dimensions, fingerprint). Nothing is written anywhere.

Prompt commands (one per line; any other line is the next text step)::

    :sketch PATH [TEXT]   :ir PATH [TEXT]   a sketch / IR step, fused with TEXT when given
    :similar ID           find items similar to a gallery item
    :similar ID --outfit-changed   the same, for a person who may have changed clothes (ranks by biometrics)
    :undo                 drop the last step
    :branch N             continue on a copy holding steps 1..N (the current line of steps is kept)
    :switch B             go back to branch B          :branches   list them
    :reject ID            the item is not the person   :confirm ID the item is the person
    :saw CONDITION        how the witness saw the person (one of the witness prior's conditions; :saw alone
                          lists them): re-ranks the questions after the current step and the next steps
    :final [N]            the final ranking            :steps      the steps so far
    :help                 :quit (or end of input)

An ID is an item id, a unique prefix of one, or ``#R`` (rank R in the list on screen). ``:undo``, ``:branch`` and
``:switch`` print the list of the step they land on, so ``#R`` never points into a step that is gone.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from engine.index import Gallery
from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.kernel.query_modalities import modalities, modality
from engine.kernel.witness_prior import ORDINARY, UnknownConditionError, load_prior
from engine.retrieval.search.errors import QueryInputError, SearchError
from engine.retrieval.search.query import StepQuery, load_image
from engine.retrieval.search.questions import questions_after
from engine.retrieval.search.session import SearchSession
from engine.retrieval.search.step import StepResult
from engine.retrieval.search.transcript import (
    final_lines,
    final_records,
    item_line,
    question_line,
    step_lines,
    step_record,
)

DEFAULT_TOP = 10
OUTFIT_CHANGED_FLAG = "--outfit-changed"
LEVEL_RULE_WORDS = ("parser", "classifier")


@dataclass(frozen=True)
class StepSettings:
    """What every step of one command shares: level override, keep rule, camera and time filters, the attribute
    weight and the required attribute keys (each step requires those of them its text states)."""

    level: str | None = None
    rho: float | None = None
    k: int | None = None
    threshold: float | None = None
    cameras: frozenset[str] | None = None
    time_range: tuple[float | None, float | None] | None = None
    attribute_weight: float | None = None
    require: tuple[str, ...] = ()

    def query(self, text: str | None = None, sketch: str | None = None, ir: str | None = None,
              example: str | None = None, outfit_changed: bool = False) -> StepQuery:
        return StepQuery(text=text, sketch=sketch, ir=ir, example=example, outfit_changed=outfit_changed,
                         level=self.level, rho=self.rho,
                         k=self.k, threshold=self.threshold, cameras=self.cameras, time_range=self.time_range,
                         attribute_weight=self.attribute_weight, require=self.required_in(text) or None)

    def required_in(self, text: str | None) -> tuple[str, ...]:
        """The required keys that ``text`` states."""
        if not self.require or not text:
            return ()
        from engine.retrieval.text.parser import parse

        stated = parse(text).attributes
        return tuple(key for key in self.require if key in stated)


@dataclass(frozen=True)
class SearchOptions:
    gallery: Path
    text: str | None = None
    then: tuple[str, ...] = ()
    sketch: Path | None = None
    ir: Path | None = None
    similar: str | None = None
    outfit_changed: bool = False
    keep: str | None = None
    threshold: float | None = None
    level: str | None = None
    cameras: tuple[str, ...] = ()
    after: str | None = None
    before: str | None = None
    checkpoint: Path | None = None
    device: str | None = None
    attribute_weight: float | None = None
    require: tuple[str, ...] = ()
    witness_saw: str | None = None
    top: int = DEFAULT_TOP
    as_json: bool = False
    interactive: bool = False


def parse_keep(text: str) -> dict[str, float | int]:
    """``--keep``: a fraction in (0, 1] is ρ (keep ⌈ρ·|C|⌉), a whole number ≥ 1 is k (``1`` is k = 1)."""
    value = text.strip()
    if value.isdigit() and int(value) >= 1:
        return {"k": int(value)}
    try:
        rho = float(value)
    except ValueError:
        rho = math.nan
    if not (math.isfinite(rho) and 0 < rho <= 1) or value.isdigit():
        raise QueryInputError(f"--keep must be a fraction in (0, 1] (ρ) or a whole number ≥ 1 (k), got {text!r}")
    return {"rho": rho}


def _time(value: str | None, option: str) -> float | None:
    if value is None:
        return None
    from engine.kernel.timefmt import parse_time

    try:
        return parse_time(value, option)
    except ValueError as exc:
        raise QueryInputError(str(exc)) from None


def step_settings(options: SearchOptions) -> tuple[StepSettings, str]:
    """(the settings every step shares, the encoder's level rule) from the options."""
    level, rule = None, "parser"
    if options.level is not None:
        word = options.level.strip()
        if word in LEVEL_RULE_WORDS:
            rule = word
        elif word.upper() in LEVELS:
            level = word.upper()
        else:
            raise QueryInputError(f"--level must be one of {list(LEVELS)} (fixed) or {list(LEVEL_RULE_WORDS)} "
                                  f"(how to read it), got {options.level!r}")
    keep: dict[str, Any] = {}
    if options.keep is not None:
        keep = parse_keep(options.keep)
        if options.threshold is not None:
            raise QueryInputError("give --keep or --threshold, not both")
    if options.threshold is not None:
        if not math.isfinite(options.threshold):
            raise QueryInputError(f"--threshold must be a finite score, got {options.threshold}")
        keep = {"threshold": float(options.threshold)}
    cameras = frozenset(c.strip() for c in options.cameras) if options.cameras else None
    if cameras is not None and not all(cameras):
        raise QueryInputError("--camera needs a camera name")
    after, before = _time(options.after, "--after"), _time(options.before, "--before")
    if after is not None and before is not None and after > before:
        raise QueryInputError(f"--after ({options.after}) is later than --before ({options.before})")
    time_range = None if after is None and before is None else (after, before)
    if not isinstance(options.top, int) or options.top < 1:
        raise QueryInputError(f"--top must be a positive number of items, got {options.top!r}")
    weight = options.attribute_weight
    if weight is not None and not (math.isfinite(weight) and weight >= 0):
        raise QueryInputError(f"--attribute-weight must be a finite number ≥ 0, got {weight}")
    require = tuple(dict.fromkeys(key.strip() for key in options.require))
    unknown = [key for key in require if key not in ONTOLOGY.attributes]
    if unknown:
        raise QueryInputError(f"--require {', '.join(unknown)}: not an attribute; one of {', '.join(ONTOLOGY.keys)}")
    return StepSettings(level=level, cameras=cameras, time_range=time_range, attribute_weight=weight,
                        require=require, **keep), rule


def _readable(path: Path | str | None, what: str) -> str | None:
    if path is None:
        return None
    load_image(Path(path), what)  # raises QueryInputError naming the file
    return str(path)


def planned_queries(options: SearchOptions, settings: StepSettings) -> list[StepQuery]:
    """The steps given on the command line: ``--text`` (fused with ``--sketch``/``--ir``) or ``--similar`` (with
    ``--outfit-changed``), then each ``--then``."""
    sketch, ir = _readable(options.sketch, "sketch"), _readable(options.ir, "IR")
    first_text = options.text.strip() if options.text else None
    if options.outfit_changed and options.similar is None:
        raise QueryInputError("--outfit-changed applies to a find-similar first step: give --similar ID")
    queries = []
    if options.similar is not None:
        if options.text is not None or sketch or ir:
            raise QueryInputError("the first step is --similar ID or --text / --sketch / --ir, not both")
        if not options.similar.strip():
            raise QueryInputError("--similar needs a gallery item id")
        queries.append(settings.query(example=options.similar.strip(), outfit_changed=options.outfit_changed))
    elif first_text or sketch or ir:
        queries.append(settings.query(first_text or None, sketch, ir))
    elif options.text is not None or not options.interactive:
        raise QueryInputError("the query is empty: give --text with words, --sketch / --ir, or --similar ID")
    if options.then and not queries:
        raise QueryInputError("--then needs a first step (--text, --sketch, --ir or --similar)")
    for number, text in enumerate(options.then, start=2):
        if not text.strip():
            raise QueryInputError(f"--then step {number} is empty: every step needs words")
        queries.append(settings.query(text.strip()))
    if queries and settings.require:
        stated = {key for q in queries for key, _ in q.require or ()}
        missing = [key for key in settings.require if key not in stated]
        if missing:
            raise QueryInputError(f"--require {', '.join(missing)}: no step's text states it")
    return queries


@dataclass
class PreparedSearch:
    gallery: Gallery
    session: SearchSession
    settings: StepSettings
    queries: list[StepQuery]
    top: int
    as_json: bool
    #: how the witness saw the person: ranks the next questions (``engine.kernel.witness_prior``)
    witness_saw: str = ORDINARY


def witness_condition(choice: str | None, option: str = "--witness-saw") -> str:
    """``choice`` as a viewing condition of the witness prior (None: ordinary viewing); an unknown one is a
    ``QueryInputError`` naming ``option`` and the choices."""
    try:
        return load_prior().condition_name(choice)
    except UnknownConditionError as exc:
        raise QueryInputError(f"{option} {choice}: {exc}") from None


def prepare(options: SearchOptions) -> PreparedSearch:
    """Check the options, open the gallery, load the checkpoint and check it against the gallery."""
    from engine.retrieval.models.discovery import load_model
    from engine.retrieval.search.opening import open_search, query_encoder

    settings, rule = step_settings(options)
    queries = planned_queries(options, settings)
    witness_saw = witness_condition(options.witness_saw)
    gallery = Gallery.open(options.gallery)
    if settings.cameras is not None:
        unknown = sorted(c for c in settings.cameras if gallery.columns.cameras.lookup(c) is None)
        if unknown:
            raise QueryInputError(f"--camera {', '.join(unknown)}: not in the gallery {gallery.root} "
                                  f"(its cameras: {', '.join(gallery.columns.cameras.names) or 'none'})")
    encoder = query_encoder(load_model(options.checkpoint, device=options.device), options.checkpoint,
                            level_rule=rule)
    encoder.check_gallery(gallery)
    session = open_search(gallery, encoder, attribute_weight=settings.attribute_weight)
    return PreparedSearch(gallery, session, settings, queries, options.top, options.as_json, witness_saw)


def describe_step(search: PreparedSearch, session: SearchSession, step: StepResult) -> dict[str, Any]:
    """STEP with the best questions to ask the witness next (``engine.retrieval.search.questions``), ranked for
    a witness who saw the person as ``search.witness_saw`` says (named in the record as ``witness_saw``)."""
    record = step_record(search.gallery, step, search.top,
                         questions_after(session, step, condition=search.witness_saw))
    record["witness_saw"] = search.witness_saw
    return record


def run_planned(search: PreparedSearch) -> dict[str, Any]:
    """Run the command line's steps: ``{"steps": [STEP, …], "final": [ITEM, …]}``."""
    steps = [describe_step(search, search.session, search.session.step(q)) for q in search.queries]
    session = search.session
    final = final_records(search.gallery, session.final_ranking(), search.top, session.steps[-1])
    return {"steps": steps, "final": final}


def report_lines(report: dict[str, Any], total: int) -> list[str]:
    lines: list[str] = []
    for step in report["steps"]:
        lines.extend(step_lines(step))
        lines.append("")
    lines.extend(final_lines(report["final"], total))
    return lines


# ------------------------------------------------------------------------------------------- prompt


def _steps(count: int) -> str:
    return f"{count} step" if count == 1 else f"{count} steps"


HELP = __doc__[__doc__.index("Prompt commands"):].replace("::", ":").replace("``", "").strip()


@dataclass
class Prompt:
    """The interactive search: one step or command per line (see the module docstring)."""

    search: PreparedSearch
    out: Callable[[str], None]
    err: Callable[[str], None]
    branches: list[SearchSession] = field(default_factory=list)
    current: int = 0
    shown: list[str] = field(default_factory=list)  # ids of the last printed list, by rank

    def __post_init__(self) -> None:
        self.branches = [self.search.session]

    @property
    def session(self) -> SearchSession:
        return self.branches[self.current]

    def emit(self, record: dict[str, Any], lines: Sequence[str]) -> None:
        if self.search.as_json:
            self.out(json.dumps(record, ensure_ascii=False))
        else:
            for line in lines:
                self.out(line)

    def run(self, lines: Iterable[str]) -> None:
        for query in self.search.queries:
            if not self._guarded(lambda q=query: self._step(q)):
                break
        for line in lines:
            line = line.strip()
            if not line:
                continue
            if line in (":quit", ":q", ":exit"):
                return
            self._guarded(lambda line=line: self.handle(line))

    def _guarded(self, action: Callable[[], None]) -> bool:
        try:
            action()
        except (SearchError, ValueError, OSError, RuntimeError) as exc:
            self.err(f"error: {exc}")
            return False
        return True

    def handle(self, line: str) -> None:
        if not line.startswith(":"):
            self._step(self.search.settings.query(line))
            return
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise QueryInputError(f"cannot read {line!r}: {exc}") from None
        command, args = words[0], words[1:]
        handler = self._commands().get(command)
        if handler is None:
            raise QueryInputError(f"unknown command {command!r}; :help lists them")
        handler(args)

    def _commands(self) -> dict[str, Callable[[list[str]], None]]:
        queries = {m.console: self._similar if m.takes == "item" else partial(self._image_step, m.name)
                   for m in modalities() if m.console}
        return {**queries, ":undo": self._undo, ":branch": self._branch, ":switch": self._switch,
                ":branches": self._branches, ":reject": lambda a: self._mark("reject", a),
                ":confirm": lambda a: self._mark("confirm", a), ":final": self._final, ":steps": self._steps,
                ":saw": self._saw,
                ":help": lambda a: self.out(HELP)}

    # ---------------------------------------------------------------------------------------- commands

    def _step(self, query: StepQuery) -> None:
        record = describe_step(self.search, self.session, self.session.step(query))
        self.shown = [item["id"] for item in record["top"]]
        self.emit(record, step_lines(record))

    def _image_step(self, what: str, args: list[str]) -> None:
        if not args:
            raise QueryInputError(f":{what} needs an image file")
        path = _readable(args[0], modality(what).label)
        text = " ".join(args[1:]).strip() or None
        self._step(self.search.settings.query(text, **{what: path}))

    def _similar(self, args: list[str]) -> None:
        changed = OUTFIT_CHANGED_FLAG in args
        item = self._item([a for a in args if a != OUTFIT_CHANGED_FLAG], ":similar")
        self._step(self.search.settings.query(example=item, outfit_changed=changed))

    def _undo(self, args: list[str]) -> None:
        step = self.session.undo()
        record, lines = self._current_list()
        self.emit({"undone": step.index + 1, "steps": len(self.session.steps), **record},
                  [f"undid step {step.index + 1}; {_steps(len(self.session.steps))} left", *lines])

    def _current_list(self) -> tuple[dict[str, Any], list[str]]:
        """The current line's last step's top list, now the one ``#R`` refers to (empty before any step)."""
        steps = self.session.steps
        if not steps:
            self.shown = []
            return {"top": []}, ["no step on this line: #R refers to nothing until the next step"]
        record = describe_step(self.search, self.session, steps[-1])
        self.shown = [item["id"] for item in record["top"]]
        return ({"top": record["top"]},
                [f"#R now refers to step {record['step']}'s list:", *(item_line(item) for item in record["top"])])

    def _number(self, args: list[str], command: str) -> int:
        if len(args) != 1 or not args[0].isdigit():
            raise QueryInputError(f"{command} needs one number, got {' '.join(args) or 'nothing'}")
        return int(args[0])

    def _branch(self, args: list[str]) -> None:
        number = self._number(args, ":branch")
        if not 1 <= number <= len(self.session.steps):
            raise QueryInputError(f":branch {number}: this branch has steps 1..{len(self.session.steps)}")
        origin = self.current + 1
        self.branches.append(self.session.branch(number - 1))
        self.current = len(self.branches) - 1
        record, lines = self._current_list()
        self.emit({"branch": self.current + 1, "from_step": number, "steps": number, **record},
                  [f"branch {self.current + 1}: steps 1..{number} of branch {origin} (:switch {origin} goes back)",
                   *lines])

    def _switch(self, args: list[str]) -> None:
        number = self._number(args, ":switch")
        if not 1 <= number <= len(self.branches):
            raise QueryInputError(f":switch {number}: branches are 1..{len(self.branches)}")
        self.current = number - 1
        record, lines = self._current_list()
        self.emit({"branch": number, "steps": len(self.session.steps), **record},
                  [f"branch {number}: {_steps(len(self.session.steps))}", *lines])

    def _branches(self, args: list[str]) -> None:
        records = [{"branch": i + 1, "steps": len(s.steps), "current": i == self.current}
                   for i, s in enumerate(self.branches)]
        self.emit({"branches": records}, [f"{'*' if r['current'] else ' '} branch {r['branch']}: {_steps(r['steps'])}"
                                          for r in records])

    def _item(self, args: list[str], command: str) -> str:
        if len(args) != 1:
            raise QueryInputError(f"{command} needs one item id (or #rank)")
        key = args[0]
        if key.startswith("#") and key[1:].isdigit():
            rank = int(key[1:])
            if not 1 <= rank <= len(self.shown):
                raise QueryInputError(f"{command} {key}: the list on screen has ranks 1..{len(self.shown)}")
            return self.shown[rank - 1]
        gallery = self.search.gallery
        if key in gallery:
            return key
        matches = [item_id for item_id in gallery.ids if item_id.startswith(key)]
        if len(matches) == 1:
            return matches[0]
        problem = "matches no item" if not matches else f"matches {len(matches)} items"
        raise QueryInputError(f"{command} {key}: {problem} of the gallery")

    def _mark(self, kind: str, args: list[str]) -> None:
        item_id = self._item(args, f":{kind}")
        getattr(self.session, kind)(item_id)
        done = "rejected" if kind == "reject" else "confirmed"
        self.emit({done: item_id}, [f"{done} {item_id}"])

    def _saw(self, args: list[str]) -> None:
        prior = load_prior()
        if not args:
            choices = [{"name": name, "label": prior.label(name), "current": name == self.search.witness_saw}
                       for name in prior.choices]
            self.emit({"witness_conditions": choices},
                      [f"{'*' if c['current'] else ' '} {c['name']}: seen {c['label']}" for c in choices])
            return
        if len(args) != 1:
            raise QueryInputError(f":saw needs one condition ({', '.join(prior.choices)}), got {' '.join(args)}")
        self.search.witness_saw = witness_condition(args[0], ":saw")
        steps = self.session.steps
        questions = [] if not steps else questions_after(self.session, steps[-1], condition=self.search.witness_saw)
        record = {"witness_saw": self.search.witness_saw, "next_questions": questions}
        self.emit(record, [f"questions now for a witness who saw the person {prior.label(self.search.witness_saw)}",
                           *(question_line(q, n) for n, q in enumerate(questions, start=1))])

    def _final(self, args: list[str]) -> None:
        top = self._number(args, ":final") if args else self.search.top
        steps = self.session.steps
        records = final_records(self.search.gallery, self.session.final_ranking(), top, steps[-1] if steps else None)
        self.shown = [r["id"] for r in records]
        self.emit({"final": records}, final_lines(records, len(self.search.gallery)))

    def _steps(self, args: list[str]) -> None:
        records = [{"step": s.index + 1, "kind": s.query.kind, "query": s.query.text, "level": s.level,
                    "candidates_before": s.candidates_before, "candidates_after": s.candidates_after}
                   for s in self.session.steps]
        self.emit({"steps": records},
                  [f"  {r['step']}: {r['kind']} {r['query'] or ''} [{r['level'] or '-'}] "
                   f"{r['candidates_before']} → {r['candidates_after']}" for r in records] or ["no steps yet"])
