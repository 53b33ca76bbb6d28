"""The run folder and the resumable training state.

A run folder (``--out``) holds:

    run.json             what makes the run itself: model config, training settings, data fingerprint, seed
    model/               the latest model checkpoint (``engine.retrieval.models.save`` format;
    ``engine.retrieval.models.load``)
    training_state.pt    model weights, optimiser, scheduler, RNG states, epoch, step within the epoch,
                         log position — everything ``--resume`` needs to continue as if never stopped
    log.jsonl            the learning curve: step losses, per-epoch validation, starts/stops/resumes
    trainer.lock/.json   held by the one process training into it (a second trainer is refused)

Every file is written to a temporary sibling and moved into place with ``os.replace``.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.kernel import folder_lock, jsonio
from engine.kernel.atomic import atomic_write_text

RUN_FORMAT = "lineup-run/1"
RUN_FILE = "run.json"
MODEL_DIR = "model"
STATE_FILE = "training_state.pt"
LOG_FILE = "log.jsonl"
#: One trainer per run folder (engine.kernel.folder_lock); a folder holding only these files is still empty.
LOCK_FILE = "trainer.lock"
HOLDER_FILE = "trainer.json"
LOCK_FILES = frozenset({LOCK_FILE, HOLDER_FILE})
#: training settings that do not change what is computed (left out of the run's identity)
NON_IDENTITY_TRAINING_KEYS = ("threads", "checkpoint_every")
#: Training keys added after runs were recorded without them, and the behaviour those runs had.
LEGACY_TRAINING_VALUES: dict[str, Any] = {
    "validation_seed": None, "low_resolution_reference": "input", "text_positives": "identity", "realism": 0.0,
    "teacher_data": [], "teacher_per_batch": 32, "teacher_min_confidence": 0.5,
    "teacher_attributes": ["top_color", "bottom_color", "hair_color"],
}
#: Loss weights added to the model config after runs were recorded without them (0: the term was off).
LEGACY_LOSS_VALUES: dict[str, Any] = {"teacher_attributes": 0.0}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


class RunFolderError(ValueError):
    """An output folder that cannot be used for this run (or a resume without a saved state)."""


class RunBusyError(RunFolderError):
    """Another process (or thread) is training into this run folder now."""


def run_identity(model_config: dict, training: dict, fingerprint: dict, seed: int) -> dict[str, Any]:
    return {
        "format": RUN_FORMAT,
        "model_config": model_config,
        "training": {k: v for k, v in training.items() if k not in NON_IDENTITY_TRAINING_KEYS},
        "data_fingerprint": {k: v for k, v in fingerprint.items() if k != "path"},
        "seed": seed,
    }


def _differences(stored: dict, current: dict) -> list[str]:
    out = []
    for key in sorted(set(stored) | set(current)):
        a, b = stored.get(key), current.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(f"{key}.{d}" for d in _differences(a, b))
        elif a != b:
            out.append(key)
    return out


class RunFolder:
    def __init__(self, out: Path | str) -> None:
        self.root = Path(out)
        self.run_file = self.root / RUN_FILE
        self.model_dir = self.root / MODEL_DIR
        self.state_file = self.root / STATE_FILE
        self.log_file = self.root / LOG_FILE

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """Hold the folder's trainer lock (created with the folder); ``RunBusyError`` when another trainer
        holds it."""
        return folder_lock.exclusive(self.root, lock_file=LOCK_FILE, holder_file=HOLDER_FILE,
                                     refuse=RunBusyError, what="run folder")

    def read_identity(self) -> dict[str, Any] | None:
        if not self.run_file.is_file():
            return None
        try:
            stored = jsonio.read(self.run_file)
        except jsonio.JsonInputError as exc:
            raise RunFolderError(f"{self.run_file} is not usable ({exc})") from None
        if isinstance(stored, dict) and isinstance(stored.get("training"), dict):
            stored["training"] = {**LEGACY_TRAINING_VALUES, **stored["training"]}  # a run recorded before them
        model_config = stored.get("model_config") if isinstance(stored, dict) else None
        if isinstance(model_config, dict) and isinstance(model_config.get("losses"), dict):
            model_config["losses"] = {**LEGACY_LOSS_VALUES, **model_config["losses"]}
        return stored

    def prepare(self, identity: dict[str, Any], resume: bool) -> None:
        """Check the folder against this run; create it (fresh run) or confirm it can be resumed."""
        if self.root.exists() and not self.root.is_dir():
            raise RunFolderError(f"--out {self.root} exists and is not a folder")
        stored = self.read_identity() if self.root.is_dir() else None
        if stored is not None and stored != identity:
            differs = ", ".join(_differences(stored, identity)[:8])
            raise RunFolderError(
                f"{self.root} holds a different run (differs in: {differs}); choose another --out")
        if resume:
            if not self.state_file.is_file():
                raise RunFolderError(
                    f"cannot resume: {self.root} has no training state ({STATE_FILE}); "
                    "start without --resume (into a new or empty folder)")
            if stored is None:
                raise RunFolderError(f"cannot resume: {self.run_file} is missing")
            self.remove_leftovers()
            return
        if stored is not None and self._saved_nothing():
            self.log_file.unlink(missing_ok=True)  # this run stopped before its first checkpoint: start it again
            self.remove_leftovers()
        elif self.root.is_dir() and any(entry.name not in LOCK_FILES for entry in self.root.iterdir()):
            if stored is not None:
                raise RunFolderError(
                    f"{self.root} already holds this run; pass --resume to continue it or choose another --out")
            raise RunFolderError(f"--out {self.root} is not empty and holds no Lineup run; choose another folder")
        self.root.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.run_file, json.dumps(identity, indent=2, sort_keys=True, ensure_ascii=False) + "\n")

    def _saved_nothing(self) -> bool:
        """Whether the folder holds only a run's record and log (and its lock or half-written temporaries): a
        run killed or crashed before its first checkpoint, with nothing to resume."""
        kept = LOCK_FILES | {RUN_FILE, LOG_FILE}
        return all(entry.name in kept or (entry.name.startswith(".") and entry.name.endswith(".tmp"))
                   for entry in self.root.iterdir())

    def remove_leftovers(self) -> None:
        """Delete half-written temporaries a killed run left behind (``.NAME.*.tmp`` files and folders)."""
        for name in (STATE_FILE, MODEL_DIR):
            for leftover in self.root.glob(f".{name}.*.tmp"):
                if leftover.is_dir():
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
                    leftover.unlink(missing_ok=True)

    # ---------------------------------------------------------------------------------------- the log
    def log_size(self) -> int:
        return self.log_file.stat().st_size if self.log_file.is_file() else 0

    def truncate_log(self, size: int) -> None:
        """Cut the log back to ``size`` bytes (records written after the saved state are replayed)."""
        if self.log_file.is_file() and self.log_file.stat().st_size > size:
            with open(self.log_file, "r+b") as fh:
                fh.truncate(size)

    def append_log(self, record: dict[str, Any]) -> None:
        with open(self.log_file, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            fh.flush()

    def read_log(self) -> list[dict[str, Any]]:
        if not self.log_file.is_file():
            return []
        lines = self.log_file.read_text(encoding="utf-8").splitlines()
        return [jsonio.loads(line, f"{self.log_file} line {number}") for number, line in enumerate(lines, start=1)
                if line.strip()]

    # -------------------------------------------------------------------------------------- the state
    def save_state(self, state: dict[str, Any]) -> None:
        fd, tmp = tempfile.mkstemp(prefix=f".{STATE_FILE}.", suffix=".tmp", dir=self.root)
        try:
            os.chmod(tmp, 0o666 & ~_UMASK)
            with os.fdopen(fd, "wb") as fh:
                torch.save(state, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.state_file)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def load_state(self) -> dict[str, Any]:
        """The saved training state, read with ``weights_only=True``: tensors, numbers, strings and containers
        only, so a planted file cannot run code. A state that needs anything else is refused by name."""
        try:
            return torch.load(self.state_file, map_location="cpu", weights_only=True)
        except FileNotFoundError:
            raise RunFolderError(f"cannot resume: {self.state_file} is missing") from None
        except pickle.UnpicklingError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RunFolderError(
                f"refusing the training state {self.state_file}: it holds objects other than tensors, numbers "
                f"and containers ({first}); such a file can run code when read. A state written by an older "
                f"Lineup cannot be resumed: start a new run with --init {self.model_dir}") from None
        except (RuntimeError, EOFError, OSError, ValueError) as exc:
            raise RunFolderError(f"cannot read the training state {self.state_file}: {exc}") from None


def capture_rng() -> dict[str, Any]:
    """Every random generator's state as tensors, numbers and tuples (what ``weights_only`` loading reads)."""
    name, keys, position, has_gauss, cached = np.random.get_state()
    state = {"torch": torch.get_rng_state(),
             "numpy": {"name": str(name), "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)),
                       "position": int(position), "has_gauss": int(has_gauss), "cached_gaussian": float(cached)},
             "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    saved = state["numpy"]
    np.random.set_state((saved["name"], saved["keys"].numpy().astype(np.uint32), saved["position"],
                         saved["has_gauss"], saved["cached_gaussian"]))
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def seed_everything(seed: int) -> None:
    """Seed torch (CPU and CUDA), numpy and random with one number."""
    torch.manual_seed(seed)
    np.random.seed(seed % (2**32))
    random.seed(seed)
