"""No data file can run code when read: every ``torch.load`` reads weights only, nothing unpickles, and a
planted training state is refused by name without running anything."""

from __future__ import annotations

import ast
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.lab.train.state import RunFolder, RunFolderError, capture_rng, restore_rng

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("engine", "app", "lineup", "bench", "migrations")


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            yield node, owner, name


def test_no_loader_can_unpickle_arbitrary_objects():
    offences = []
    for top in SOURCES:
        for path in sorted((REPO / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node, owner, name in _calls(tree):
                keywords = {k.arg: k.value for k in node.keywords}
                where = f"{path.relative_to(REPO)}:{node.lineno}"
                if owner == "torch" and name == "load":
                    value = keywords.get("weights_only")
                    if not (isinstance(value, ast.Constant) and value.value is True):
                        offences.append(f"{where}: torch.load without weights_only=True")
                elif owner in ("pickle", "dill", "joblib", "cloudpickle", "marshal") and name in ("load", "loads"):
                    offences.append(f"{where}: {owner}.{name}")
                elif owner == "np" and name == "load":
                    value = keywords.get("allow_pickle")
                    if isinstance(value, ast.Constant) and value.value is True:
                        offences.append(f"{where}: np.load(allow_pickle=True)")
    assert offences == []


class _Planted:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "ran"))


def test_a_planted_training_state_does_not_run(tmp_path):
    run = RunFolder(tmp_path / "run")
    run.root.mkdir()
    marker = tmp_path / "ran.txt"
    with open(run.state_file, "wb") as fh:
        pickle.dump({"model": _Planted(marker)}, fh)
    with pytest.raises(RunFolderError, match="refusing the training state .*can run code"):
        run.load_state()
    torch.save({"model": _Planted(marker)}, run.state_file)
    with pytest.raises(RunFolderError, match="refusing the training state"):
        run.load_state()
    assert not marker.exists()


def test_the_training_state_round_trips_through_weights_only_loading(tmp_path):
    run = RunFolder(tmp_path / "run")
    run.root.mkdir()
    np.random.seed(7)
    random.seed(7)
    torch.manual_seed(7)
    np.random.standard_normal()  # leaves a cached gaussian in numpy's state
    run.save_state({"rng": capture_rng(), "epoch": 3, "last_validation": {"R@1": 0.5}})
    expected = (np.random.standard_normal(3), random.random(), torch.rand(2))
    np.random.seed(1)
    random.seed(1)
    torch.manual_seed(1)
    state = run.load_state()
    restore_rng(state["rng"])
    assert state["epoch"] == 3 and state["last_validation"] == {"R@1": 0.5}
    again = (np.random.standard_normal(3), random.random(), torch.rand(2))
    assert np.array_equal(expected[0], again[0]) and expected[1] == again[1] and torch.equal(expected[2], again[2])
