"""Portable evidence: a case folder (database, evidence, galleries, report) copied elsewhere verifies there;
the manifest carries relative paths, the models and what a score is; the report prints no absolute path and no
OS user unless asked; hidden control characters show as visible escapes."""

from __future__ import annotations

import getpass
import json
import shutil

import pytest
from report_cases import report_case
from typer.testing import CliRunner

from app.report import export_report, verify_report
from app.report.markup import SCORE_STATEMENT, visible
from app.store import CaseStore
from lineup.cli import app

pytestmark = pytest.mark.usefixtures("qapp")


def test_a_copied_case_folder_verifies_where_it_lands(tmp_path):
    folder = tmp_path / "case"
    built = report_case(folder)
    result = export_report(built.db, built.case_id, folder / "case.html")
    manifest = json.loads(result.manifest_path.read_text())
    assert manifest["db_path"] == "cases.sqlite"
    assert all(not e["path"].startswith("/") for e in manifest["evidence"]), manifest["evidence"]
    assert manifest["statement"] == SCORE_STATEMENT and manifest["model_fingerprints"]
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(folder, moved)
    folder.rename(tmp_path / "original-gone")  # nothing may be read from where it was made
    check = verify_report(moved / "case.html", moved / "cases.sqlite")
    assert check.ok, check.problems
    # the database given from another place: relative paths follow --case-dir
    db_apart = tmp_path / "db-apart.sqlite"
    shutil.copy(moved / "cases.sqlite", db_apart)
    shutil.copytree(moved / "cases.sqlite.evidence", tmp_path / "db-apart.sqlite.evidence")
    cli = CliRunner().invoke(app, ["report", "verify", str(moved / "case.html"), "--db", str(db_apart),
                                   "--case-dir", str(moved)])
    assert cli.exit_code == 0, cli.output
    assert "made from case database cases.sqlite" in cli.output


def test_the_report_prints_no_absolute_path_or_os_user_unless_asked(tmp_path):
    built = report_case(tmp_path)
    plain = export_report(built.db, built.case_id, tmp_path / "plain.html").report_path.read_text(encoding="utf-8")
    assert str(tmp_path) not in plain
    user = getpass.getuser()
    assert f"report made by {user}" not in plain
    full = export_report(built.db, built.case_id, tmp_path / "full.html", show_paths=True)
    page = full.report_path.read_text(encoding="utf-8")
    assert str(tmp_path) in page


def test_bidi_controls_and_nuls_read_as_escapes(tmp_path):
    built = report_case(tmp_path)
    with CaseStore.open(built.db, actor="examiner") as store:
        store.rename(built.case_id, "photo gnp\u202e.exe")
        store.add_note(built.case_id, "nul\u0000here and \u2066isolate\u2069")
    page = export_report(built.db, built.case_id, tmp_path / "r.html").report_path.read_text(encoding="utf-8")
    assert "\u202e" not in page and "\u0000" not in page and "\u2066" not in page
    assert "photo gnp&lt;U+202E&gt;.exe" in page and "nul&lt;U+0000&gt;here" in page
    assert visible("a\tb\nc") == "a\tb\nc"
