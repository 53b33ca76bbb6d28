"""Hostile-input fuzzing of the ``lineup`` command line: crashes against named errors.

Generates ``--count`` bad inputs (``bench/fuzz_inputs.py``: images, videos, world manifests, dataset files,
checkpoints, text queries and options, damaged gallery folders, case databases and report manifests) from
``--seed`` and drives each through the CLI entry point a user would call. Most cases run in-process through
typer's ``CliRunner`` inside worker processes that load the shipped checkpoint once; every ``--subprocess-every``
-th case runs as a real ``python -m lineup`` process instead, to catch signals and what only a fresh
interpreter shows. A worker that dies by a signal or runs past ``--timeout`` is a crash of the case it was
running, and is replaced.

Each case ends as one of:

- ``named``: exit code 1 or 2, no traceback, and the message names the input (one of the case's words);
- ``unnamed``: exit code 1 or 2, no traceback, but the message does not name the input (counted, not a crash);
- ``success``: exit code 0 (bad inputs skipped with a warning, odd queries ranked, …);
- ``crash``: a Python traceback in the output, an exception escaping the command, an exit by a signal, another
  exit code, a hang past the timeout, a peak memory over ``--max-rss`` (2 GiB; measured as the worker's peak
  during the case, started afresh before it where Linux allows (``/proc/self/clear_refs``), else the worker's
  lifetime peak when this case raised it; a real process's own peak), a file the case names as a survivor
  moved or deleted (a planted gallery journal applied), or a file it forbids created (a planted pickle run).

Prints a table per entry point and input kind, then every crash with its command line and a reproducer
(``--case N`` rebuilds that one input from the seed and runs it alone; ``--keep`` keeps its files). ``--json``
writes every case's result. Exit code 1 when there was a crash. Not run by the tests (``tests/test_fuzz.py``
runs a small count).

Usage: ``.venv/bin/python bench/fuzz.py [--seed 0] [--count 1000] [--jobs 1] [--json results.json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import asdict
from multiprocessing.connection import wait
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for entry in (str(ROOT), str(Path(__file__).resolve().parent)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from fuzz_inputs import GENERATORS, Case, Fixtures, make_case  # noqa: E402

TRACEBACKS = ("Traceback (most recent call last)", "─ Traceback ")  # Python's, and typer's boxed (rich) one
MEMORY_LIMIT = 12 << 30
MAX_RSS = 2 << 30  # a case whose peak resident memory passes this is a crash
OUTCOMES = ("named", "unnamed", "success", "crash")


def environment(work: Path) -> dict[str, str]:
    """The environment of every run: one thread, offline, headless, keys and user data inside ``work``."""
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "QT_QPA_PLATFORM": "offscreen",
                "LINEUP_SIGNING_KEY": str(work / "signing-key.pem"), "XDG_DATA_HOME": str(work / "user-data"),
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))})
    return env


# --------------------------------------------------------------------------------------------- fixtures


def build_fixtures(work: Path) -> Fixtures:
    """The good material: a tiny world, a gallery of it (shipped checkpoint), a tiny checkpoint, a clip, a case
    database with an exported HTML report."""
    import cv2
    import numpy as np
    import torch

    torch.set_num_threads(1)
    from engine.ingest import ModelEncoder, ingest
    from engine.lab.world.build import build_world
    from engine.retrieval.models import create, save
    from engine.retrieval.models.discovery import load_model

    root = work / "fixtures"
    shutil.rmtree(root, ignore_errors=True)
    world = root / "world"
    build_world(world, identities=4, images_per_identity=3, seed=0, workers=1)
    person = next(p for p in sorted((world / "images").rglob("*.jpg")))
    ingest(world, root / "gallery", ModelEncoder(load_model(None, device="cpu")))
    torch.manual_seed(0)
    checkpoint = save(create("tiny", device="cpu"), root / "tiny-checkpoint")
    video = root / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (160, 120))
    figure = cv2.resize(cv2.imread(str(person)), (40, 80))
    for frame_number in range(12):
        frame = np.full((120, 160, 3), 90, np.uint8)
        x = 10 + 8 * frame_number
        frame[20:100, x:x + 40] = figure
        writer.write(frame)
    writer.release()
    db, report = case_report(root, work)
    return Fixtures(root=root, world=world, gallery=root / "gallery", checkpoint=checkpoint, db=db, report=report,
                    video=video, person_jpeg=person.read_bytes(), run=training_run(root, world, work))


def training_run(root: Path, world: Path, work: Path) -> Path | None:
    """A resumable one-epoch run of the tiny config on the fixture world (a real process), or None when it cannot
    be made here (the pickle cases then resume an empty folder)."""
    from engine.lab.world.build import build_world

    run = root / "run"
    world = root / "trainworld"  # enough identities for the tiny config's batches
    build_world(world, identities=24, images_per_identity=2, seed=1, workers=1)
    done = subprocess.run([sys.executable, "-m", "lineup", "train", "--config", "tiny", "--data", f"world:{world}",
                           "--out", str(run), "--epochs", "1", "--device", "cpu"], cwd=ROOT, env=environment(work),
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0 or not (run / "training_state.pt").is_file():
        print(f"note: no fixture training run ({done.stdout[-300:]}{done.stderr[-300:]})", file=sys.stderr)
        return None
    return run


def case_report(root: Path, work: Path) -> tuple[Path, Path]:
    """A case database holding one case with a note, and its report exported by the CLI (a real process)."""
    from app.store import CaseStore

    db = root / "cases.db"
    with CaseStore.open(db, actor="fuzz") as store:
        case = store.create_case("Fuzz case", "A case whose database and report are damaged per input.")
        store.add_note(case, "A note.")
    report = root / "case.html"
    done = subprocess.run([sys.executable, "-m", "lineup", "report", "export", "--db", str(db), "--case",
                           str(case), "--out", str(report)], cwd=ROOT, env=environment(work), capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"the fixture report could not be exported:\n{done.stdout}{done.stderr}")
    return db, report


# --------------------------------------------------------------------------------------------- running


def limit_memory() -> None:
    """Cap the address space of a run (``MEMORY_LIMIT``): a runaway allocation fails in that process instead of
    exhausting a shared machine."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def peak_rss(who: int) -> int:
    """Peak resident memory in bytes of this process or its waited-for children (Linux reports KiB)."""
    return resource.getrusage(who).ru_maxrss * 1024


def _status_bytes(field: str) -> int | None:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in bytes; None where there is no such file."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def reset_peak() -> bool:
    """Start this process's peak resident memory (``VmHWM``) afresh (Linux ``clear_refs`` 5); False where the
    system does not allow it, and the lifetime peak (``ru_maxrss``) is all there is."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return _status_bytes("VmHWM") is not None


def worker_main(connection, env: dict[str, str]) -> None:
    """Run cases in-process with typer's ``CliRunner``; the shipped checkpoint is loaded once and reused."""
    os.environ.update(env)
    limit_memory()
    import torch

    torch.set_num_threads(1)
    from typer.testing import CliRunner

    import engine.retrieval.models
    import engine.retrieval.models.checkpoint
    from engine.retrieval.models.discovery import default_checkpoint
    from lineup.cli import app

    original = engine.retrieval.models.checkpoint.load
    shipped = Path(default_checkpoint()).resolve()
    cache: dict[str, object] = {}

    def load_once(path, device=None):
        if Path(path).resolve() != shipped:
            return original(path, device=device)
        key = str(device)
        if key not in cache:
            cache[key] = original(path, device=device)
        return cache[key]

    engine.retrieval.models.load = engine.retrieval.models.checkpoint.load = load_once
    runner = CliRunner()
    while True:
        case = connection.recv()
        if case is None:
            return
        started = time.monotonic()
        before = peak_rss(resource.RUSAGE_SELF)
        resident = _status_bytes("VmRSS")  # what the worker holds before the case (model, caches)
        fresh = reset_peak()  # the case's own peak, not the worker's lifetime one
        result = runner.invoke(app, case["argv"], input=case["stdin"], catch_exceptions=True)
        escaped = None
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            escaped = "".join(traceback.format_exception(*result.exc_info))
        after = _status_bytes("VmHWM") if fresh else peak_rss(resource.RUSAGE_SELF)
        peak = after if fresh or after > before else None
        connection.send({"exit_code": result.exit_code, "output": result.output, "escaped": escaped,
                         "seconds": time.monotonic() - started, "peak_rss": peak, "rss_before": resident,
                         "worker_peak_rss": after})


class Worker:
    """An in-process runner in its own process (spawned), replaced when it dies or hangs."""

    def __init__(self, env: dict[str, str]) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=worker_main, args=(child, env), daemon=True)
        self.process.start()
        child.close()

    def start(self, case: Case) -> None:
        self.connection.send({"argv": case.argv, "stdin": case.stdin})

    def result(self) -> dict | None:
        if self.connection.poll():
            try:
                return self.connection.recv()
            except EOFError:
                pass
        if not self.process.is_alive():
            code = self.process.exitcode
            return {"exit_code": code, "output": "", "escaped": None, "seconds": None, "died": True}
        return None

    def waitable(self):
        return self.connection

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            with contextlib.suppress(OSError):
                self.connection.send(None)
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()


class Child:
    """One case as a real ``python -m lineup`` process."""

    def __init__(self, case: Case, env: dict[str, str], folder: Path) -> None:
        self.output = folder / "output.txt"
        self.started = time.monotonic()
        with open(self.output, "wb") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "lineup", *case.argv], cwd=ROOT, env=env,
                                            stdin=subprocess.PIPE if case.stdin is not None else subprocess.DEVNULL,
                                            stdout=out, stderr=subprocess.STDOUT, preexec_fn=limit_memory)
        if case.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.write(case.stdin.encode("utf-8", "surrogateescape"))
                self.process.stdin.close()

    def result(self) -> dict | None:
        if self.process.returncode is None:
            try:
                pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            except ChildProcessError:
                pid, status, usage = self.process.pid, 0, None
            if pid == 0:
                return None
            self.process.returncode = os.waitstatus_to_exitcode(status)
            self.peak = usage.ru_maxrss * 1024 if usage is not None else None
        code = self.process.returncode
        output = self.output.read_text(encoding="utf-8", errors="replace")
        return {"exit_code": code, "output": output, "escaped": None, "seconds": time.monotonic() - self.started,
                "died": code < 0, "peak_rss": getattr(self, "peak", None)}

    def stop(self, kill: bool = True) -> None:
        self.process.kill()
        self.process.wait()


def classify(case: Case, result: dict) -> tuple[str, str]:
    """(outcome, reason) of one finished case (see the module docstring)."""
    output = result.get("output") or ""
    code = result["exit_code"]
    limit = case.max_rss or MAX_RSS
    if result.get("peak_rss") and result["peak_rss"] > limit:
        return "crash", f"peak memory {result['peak_rss'] / 2**30:.2f} GiB, over {limit / 2**30:.2f} GiB"
    for path in case.forbidden:
        if os.path.lexists(path):
            return "crash", f"{path} appeared (a planted payload ran)"
    for path in case.survivors:
        if not os.path.lexists(path):
            return "crash", f"{path} was moved or deleted (a planted change was applied)"
    if result.get("timed_out"):
        return "crash", f"no answer after {case.timeout:.0f} s (a hang)"
    if result.get("died"):
        return "crash", f"killed by signal {-code}" if code is not None and code < 0 else f"process died ({code})"
    if result.get("escaped"):
        return "crash", result["escaped"].strip().splitlines()[-1]
    if any(mark in output for mark in TRACEBACKS):
        return "crash", "traceback: " + output.strip().splitlines()[-1]
    if code == 0:
        return "success", ""
    if code in (1, 2):
        lowered = output.casefold()
        if any(name.casefold() in lowered for name in case.names if name):
            return "named", ""
        return "unnamed", output.strip().splitlines()[-1][:200] if output.strip() else "(no message)"
    return "crash", f"exit code {code}"


def reproducer(number: int, seed: int) -> str:
    return f"python bench/fuzz.py --seed {seed} --case {number} --keep"


def run_cases(cases: list[tuple[Case, Path]], env: dict[str, str], jobs: int, subprocess_every: int,
              echo) -> list[dict]:
    """Run every case (``jobs`` at a time) and return one result record per case, in case order."""
    pending = list(cases)
    idle: list[Worker] = []
    running: dict[int, tuple[Worker | Child, Case, Path, float, str]] = {}
    records: dict[int, dict] = {}
    slots = 0
    try:
        while pending or running:
            while pending and len(running) < jobs:
                case, folder = pending.pop(0)
                if subprocess_every and case.number % subprocess_every == subprocess_every - 1:
                    runner = Child(case, env, folder)
                    case_mode = "subprocess"
                else:
                    runner = idle.pop() if idle else Worker(env)
                    runner.start(case)
                    case_mode = "in-process"
                slots += 1
                running[slots] = (runner, case, folder, time.monotonic(), case_mode)
            waitables = [r.waitable() for r, *_ in running.values() if isinstance(r, Worker)]
            wait(waitables, timeout=0.2) if waitables else time.sleep(0.2)
            for slot, (runner, case, _, started, case_mode) in list(running.items()):
                result = runner.result()
                if result is None and time.monotonic() - started > case.timeout:
                    runner.stop(kill=True)
                    result = {"exit_code": None, "output": "", "escaped": None, "seconds": case.timeout,
                              "timed_out": True}
                if result is None:
                    continue
                del running[slot]
                over = (result.get("worker_peak_rss") or 0) > (case.max_rss or MAX_RSS)
                if isinstance(runner, Worker) and runner.process.is_alive() and not result.get("timed_out") \
                        and not over:  # a worker past the memory limit is replaced: its peak cannot go down
                    idle.append(runner)
                elif isinstance(runner, Worker):
                    runner.stop(kill=True)
                outcome, reason = classify(case, result)
                record = {**asdict(case), "mode": case_mode, "outcome": outcome, "reason": reason,
                          "exit_code": result["exit_code"], "seconds": result["seconds"],
                          "peak_rss": result.get("peak_rss"), "rss_before": result.get("rss_before"),
                          "output": (result.get("output") or "")[-4000:], "escaped": result.get("escaped")}
                records[case.number] = record
                echo(record)
    finally:
        for worker in idle:
            worker.stop()
        for runner, *_ in running.values():
            runner.stop(kill=True)
    return [records[number] for number in sorted(records)]


# --------------------------------------------------------------------------------------------- report


def family(kind: str) -> str:
    return kind.split(":", 1)[0]


def table(records: list[dict]) -> list[str]:
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for record in records:
        counts[(record["entry"], family(record["kind"]))][record["outcome"]] += 1
    width = max([len(e) for e, _ in counts] + [11])
    lines = [f"{'entry point':<{width}}  {'input':<14} {'cases':>5} {'named':>6} {'unnamed':>7} {'success':>7} "
             f"{'crash':>5}"]
    total = Counter()
    for (entry, kind), counter in sorted(counts.items()):
        total.update(counter)
        lines.append(f"{entry:<{width}}  {kind:<14} {sum(counter.values()):>5} {counter['named']:>6} "
                     f"{counter['unnamed']:>7} {counter['success']:>7} {counter['crash']:>5}")
    lines.append(f"{'all':<{width}}  {'':<14} {sum(total.values()):>5} {total['named']:>6} {total['unnamed']:>7} "
                 f"{total['success']:>7} {total['crash']:>5}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (each in-process job is a process)")
    parser.add_argument("--subprocess-every", type=int, default=25,
                        help="every Nth case runs as a real process (0: none)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds before a case counts as a hang")
    parser.add_argument("--case", type=int, default=None, help="run only this case number (a reproducer)")
    parser.add_argument("--subprocess", action="store_true", help="with --case: run it as a real process")
    parser.add_argument("--work", type=Path, default=None, help="working folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep every case's files (default: crashes only)")
    parser.add_argument("--json", type=Path, default=None, help="write every case's result to this file")
    parser.add_argument("--verbose", action="store_true", help="print every case as it finishes")
    parser.add_argument("--families", default=None,
                        help="comma-separated generator families to draw from (default: all); e.g. "
                             "deep-json,large-batch,sparse,journal,pickle,bidi")
    options = parser.parse_args(argv)

    families = None if not options.families else [f.strip() for f in options.families.split(",") if f.strip()]
    unknown = sorted(set(families or ()) - set(GENERATORS))
    if unknown:
        parser.error(f"--families: unknown {unknown}; families: {list(GENERATORS)}")
    work = options.work or Path(tempfile.mkdtemp(prefix="lineup-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    env = environment(work)
    os.environ.update({k: env[k] for k in ("OMP_NUM_THREADS", "LINEUP_SIGNING_KEY", "XDG_DATA_HOME")})
    started = time.monotonic()
    fixtures = build_fixtures(work)
    numbers = [options.case] if options.case is not None else list(range(options.count))
    cases = []
    for number in numbers:
        folder = work / "cases" / f"{number:05d}"
        shutil.rmtree(folder, ignore_errors=True)
        case = make_case(fixtures, options.seed, number, folder, families)
        if options.timeout is not None:
            case.timeout = options.timeout
        cases.append((case, folder))
    setup = time.monotonic() - started
    every = options.subprocess_every
    if options.case is not None:
        every = 1 if options.subprocess else 0
        print("command: lineup " + shlex.join(cases[0][0].argv))

    done = Counter()

    def echo(record: dict) -> None:
        done[record["outcome"]] += 1
        if options.verbose or record["outcome"] == "crash" or options.case is not None:
            print(f"#{record['number']} {record['entry']} [{record['kind']}] {record['mode']}: {record['outcome']}"
                  f" {record['reason']}", flush=True)
        if options.case is not None:
            print(record["escaped"] or record["output"])
        if not options.keep and record["outcome"] != "crash":
            shutil.rmtree(work / "cases" / f"{record['number']:05d}", ignore_errors=True)

    records = run_cases(cases, env, max(1, options.jobs), every, echo)
    elapsed = time.monotonic() - started
    crashes = [r for r in records if r["outcome"] == "crash"]
    peaks = [r["peak_rss"] for r in records if r.get("peak_rss")]
    print(f"\nfuzzed {len(records)} inputs (seed {options.seed}, families {families or 'all'}) in {elapsed:.0f} s "
          f"(fixtures {setup:.0f} s), "
          f"{sum(r['mode'] == 'subprocess' for r in records)} as real processes; work folder {work}")
    if peaks:
        print(f"highest peak memory of a case: {max(peaks) / 2**30:.2f} GiB (limit {MAX_RSS / 2**30:.0f} GiB)")
    print("\n".join(table(records)))
    if crashes:
        print(f"\n{len(crashes)} crash(es):")
        for record in crashes:
            print(f"  #{record['number']} {record['entry']} [{record['kind']}] {record['mode']}: {record['reason']}")
            print(f"      lineup {shlex.join(record['argv'])}")
            print(f"      reproduce: {reproducer(record['number'], options.seed)}")
    else:
        print("\nno crashes")
    if options.json is not None:
        options.json.write_text(json.dumps({"seed": options.seed, "count": len(records), "seconds": elapsed,
                                            "outcomes": dict(Counter(r["outcome"] for r in records)),
                                            "table": table(records), "cases": records}, indent=1))
    if not options.keep and not crashes and options.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
