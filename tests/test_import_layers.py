"""The engine's floor, lab and acyclicity contracts (``pyproject.toml``, docs/architecture.md) hold, and they break
when an upward import, a runtime import of the lab or an import cycle is added: import-linter runs on a copy of
``engine/`` with the contracts as configured."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
ENGINE_CONTRACTS = ("layers", "acyclic_siblings", "forbidden")
RUNTIME = ["engine.kernel", "engine.perception", "engine.index", "engine.retrieval", "engine.ingest"]


def _engine_contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return [c for c in config["contracts"] if c["type"] in ENGINE_CONTRACTS
            and ((c.get("containers") or c.get("ancestors")) == ["engine"]
                 or c.get("forbidden_modules") == ["engine.lab"])]


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _copy_with_contracts(tmp_path: Path, package: str, contracts: list[dict]) -> Path:
    """A copy of ``package`` beside a ``contracts.toml`` that holds only ``contracts``."""
    shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    lines = ["[tool.importlinter]", f'root_packages = ["{package}"]', ""]
    for contract in contracts:
        lines.append("[[tool.importlinter.contracts]]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in contract.items()]
        lines.append("")
    (tmp_path / "contracts.toml").write_text("\n".join(lines), encoding="utf-8")
    return tmp_path


@pytest.fixture
def engine_copy(tmp_path: Path) -> Path:
    """A copy of ``engine/`` with a config that holds only the engine's layer and acyclicity contracts."""
    return _copy_with_contracts(tmp_path, "engine", _engine_contracts())


def _lint(folder: Path) -> subprocess.CompletedProcess:
    if not LINT_IMPORTS.exists():
        pytest.fail(f"lint-imports is not installed beside {sys.executable} (install the dev extras)")
    env = dict(os.environ, PYTHONPATH=str(folder))
    return subprocess.run([str(LINT_IMPORTS), "--config", "contracts.toml", "--no-cache"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)


def _add_import(module: Path, statement: str) -> None:
    text = module.read_text(encoding="utf-8")
    module.write_text(text + f"\n{statement}  # added by the test\n", encoding="utf-8")


def test_the_engine_contracts_are_configured():
    kinds = sorted(c["type"] for c in _engine_contracts())
    assert kinds == sorted(ENGINE_CONTRACTS)
    layers = next(c for c in _engine_contracts() if c["type"] == "layers")
    assert layers["containers"] == ["engine"] and layers["exhaustive"] is True
    assert layers["layers"] == ["cli", "lab", "ingest", "retrieval", "index", "perception", "kernel"]
    lab = next(c for c in _engine_contracts() if c["type"] == "forbidden")
    assert lab["source_modules"] == RUNTIME and not lab.get("allow_indirect_imports", False)


def test_the_unchanged_engine_keeps_its_contracts(engine_copy):
    result = _lint(engine_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers_contract(engine_copy):
    _add_import(engine_copy / "engine" / "index" / "scoring.py", "import engine.retrieval.search.session")
    result = _lint(engine_copy)
    assert result.returncode == 1
    assert "stack of floors" in result.stdout and "BROKEN" in result.stdout
    assert "engine.index.scoring -> engine.retrieval.search.session" in result.stdout


def test_a_runtime_import_of_the_lab_breaks_the_lab_contract(engine_copy):
    _add_import(engine_copy / "engine" / "retrieval" / "search" / "ranking.py", "import engine.lab.world.build")
    result = _lint(engine_copy)
    assert result.returncode == 1
    assert "0 kept, 3 broken" in result.stdout  # the floors, the lab contract and (lab imports retrieval) a cycle
    assert "engine.retrieval.search.ranking -> engine.lab.world.build" in result.stdout


def test_a_lazy_upward_import_inside_a_function_breaks_it_too(engine_copy):
    _add_import(engine_copy / "engine" / "retrieval" / "encoding" / "resolution.py",
                "def _late():\n    from engine.ingest import timing\n    return timing")
    result = _lint(engine_copy)
    assert result.returncode == 1
    assert "engine.retrieval.encoding.resolution -> engine.ingest.timing" in result.stdout


def test_a_file_cycle_inside_a_folder_breaks_the_acyclic_contract(engine_copy):
    _add_import(engine_copy / "engine" / "index" / "items.py", "import engine.index.store")
    result = _lint(engine_copy)
    assert result.returncode == 1
    broken = [line for line in result.stdout.splitlines() if "BROKEN" in line]
    assert any("no import cycles" in line or "folder" in line for line in broken), result.stdout
    assert "stack of floors" not in "".join(broken)


def test_a_new_floor_must_be_placed_in_the_stack(engine_copy):
    (engine_copy / "engine" / "unplaced.py").write_text('"""Not in any layer."""\n', encoding="utf-8")
    result = _lint(engine_copy)
    assert result.returncode == 1
    assert "engine.unplaced" in result.stdout


def _app_contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return [c for c in config["contracts"] if "app" in (c.get("containers") or c.get("ancestors") or [])
            or c.get("source_modules") == ["app.jobs"]]


@pytest.fixture
def app_copy(tmp_path: Path) -> Path:
    """A copy of ``app/`` with a config that holds only the app's layer, jobs and acyclicity contracts."""
    return _copy_with_contracts(tmp_path, "app", _app_contracts())


def test_the_app_keeps_its_layers_and_a_job_importing_the_state_breaks_them(app_copy):
    assert sorted(c["type"] for c in _app_contracts()) == ["acyclic_siblings", "forbidden", "layers"]
    result = _lint(app_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout
    _add_import(app_copy / "app" / "jobs" / "search_step.py", "import app.state.marks")
    result = _lint(app_copy)
    assert result.returncode == 1
    assert "app.jobs.search_step -> app.state.marks" in result.stdout
    assert "0 kept, 3 broken" in result.stdout
