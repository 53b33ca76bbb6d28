"""``lineup report export|verify`` (lineup/cli.py, above engine and app): a round trip, a failing
check with its problems listed and exit code 1, input errors with exit code 2; and the layering: the engine's
CLI imports no app code, the report builder no widgets."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from report_cases import report_case
from typer.testing import CliRunner

from lineup.cli import app

pytestmark = pytest.mark.usefixtures("qapp")  # a QApplication, as in the app (not a bare QGuiApplication)


def test_export_then_verify_round_trip(tmp_path):
    built = report_case(tmp_path)
    runner = CliRunner()
    out = tmp_path / "case.pdf"
    exported = runner.invoke(app, ["report", "export", "--db", str(built.db), "--case", str(built.case_id),
                                   "--out", str(out), "--blur-faces"])
    assert exported.exit_code == 0, exported.output
    assert f"wrote {out} (pdf, " in exported.output and "5 evidence hashes" in exported.output
    assert json.loads((tmp_path / "case.pdf.manifest.json").read_text())["blur_faces"] is True
    verified = runner.invoke(app, ["report", "verify", str(out), "--db", str(built.db)])
    assert verified.exit_code == 0, verified.output
    assert "OK:" in verified.output

    out.write_bytes(out.read_bytes().replace(b"%%EOF", b"%%EOF\n% appended"))
    failed = runner.invoke(app, ["report", "verify", str(out), "--db", str(built.db)])
    assert failed.exit_code == 1
    assert "FAILED" in failed.output and "has been changed since it was made" in failed.output


def test_input_errors_exit_with_2(tmp_path):
    built = report_case(tmp_path)
    runner = CliRunner()
    wrong_suffix = runner.invoke(app, ["report", "export", "--db", str(built.db), "--case", "1",
                                       "--out", str(tmp_path / "case.txt")])
    assert wrong_suffix.exit_code == 2 and "must end in .pdf or .html" in wrong_suffix.output
    no_case = runner.invoke(app, ["report", "export", "--db", str(built.db), "--case", "9",
                                  "--out", str(tmp_path / "case.html")])
    assert no_case.exit_code == 2 and "has no case 9" in no_case.output
    no_manifest = runner.invoke(app, ["report", "verify", str(tmp_path / "case.html"), "--db", str(built.db)])
    assert no_manifest.exit_code == 1 and "does not exist" in no_manifest.output


def loaded_after(code: str) -> set[str]:
    script = f"import sys, json; {code}; print(json.dumps(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(run.stdout))


def test_the_engine_cli_loads_no_app_code_and_the_report_no_widgets():
    engine_side = loaded_after("import typer, engine.cli; engine.cli.register(typer.Typer())")
    assert not {m for m in engine_side if m.split(".")[0] in {"app", "PySide6", "sqlalchemy", "alembic"}}
    report_side = loaded_after("import app.report, app.report.pdf, app.report.plots, app.report.qt")
    assert not {m for m in report_side if m.startswith(("PySide6.QtWidgets", "pyqtgraph", "app.views"))}
