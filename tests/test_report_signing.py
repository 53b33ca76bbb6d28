"""Signed reports (app/report/signing.py, manifest.py, verify.py): the manifest is signed with the installation's
Ed25519 key and carries the report's content as digests; an edited report with its hash put into the manifest,
a rewritten note with a rehashed chain and an updated head, a flipped head hash and a manifest re-signed with
another key are each caught and blamed on the right party. The report states what a score is, the software,
the examiner, the key fingerprint and UTC times; the key and the report files are owner-only."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest
from report_cases import report_case
from typer.testing import CliRunner

from app.report import ReportError, export_report, verify_report
from app.report.manifest import Manifest
from app.report.signing import KEY_VARIABLE, grouped, installation_key
from app.store import CaseStore
from app.store.audit import entry_hash
from app.store.models import canonical_json
from engine.kernel.hashing import sha256_file
from lineup.cli import app

pytestmark = pytest.mark.usefixtures("qapp")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def exported(tmp_path):
    built = report_case(tmp_path)
    result = export_report(built.db, built.case_id, tmp_path / "case.html")
    return built, result


def has(problems, *words) -> bool:
    return any(all(word in problem for word in words) for problem in problems)


def rewrite_manifest(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_the_report_states_score_software_examiner_key_and_utc(exported):
    built, result = exported
    page = result.report_path.read_text(encoding="utf-8")
    key = installation_key(create=False)
    assert key is not None and grouped(key.fingerprint) in page
    assert "it is not an identification of any person" in page
    assert "Lineup 0.1.0" in page and "examiner" in page  # the case's creator in report_case is "examiner"
    assert "all times are in UTC" in page and " UTC" in page
    manifest = json.loads(result.manifest_path.read_text())
    assert manifest["signer"]["fingerprint"] == key.fingerprint and manifest["software"].startswith("Lineup")
    assert set(manifest["content"]) == {"steps", "marks", "notes", "all"} and manifest["content"]["notes"]
    assert mode(result.report_path) == 0o600 and mode(result.manifest_path) == 0o600
    assert mode(key.path) == 0o600


def test_an_edited_report_with_its_new_hash_in_the_manifest_fails(exported):
    built, result = exported
    page = result.report_path.read_text(encoding="utf-8")
    result.report_path.write_text(page.replace("same bag", "different bag"), encoding="utf-8")
    rewrite_manifest(result.manifest_path,
                     lambda data: data["report"].__setitem__("sha256", sha256_file(result.report_path)))
    found = verify_report(result.report_path, built.db).problems
    assert has(found, "manifest: its signature does not verify", "edited after it was signed")
    assert has(found, "report file", "manifest is not trustworthy")


def _rehash_chain(db: Path, case_id: int, change_note) -> None:
    connection = sqlite3.connect(db)
    rows = connection.execute("SELECT seq, at, actor, action, payload, prev_hash FROM audit_entries "
                              "WHERE case_id = ? ORDER BY seq", (case_id,)).fetchall()
    connection.close()
    updates, prev = [], None
    for seq, at, actor, action, payload, old_prev in rows:
        prev = old_prev if prev is None else prev
        data = json.loads(payload)
        if action == "note.add" or "note" in data and "text" in data:
            data = change_note(data)
        digest = entry_hash(prev, case_id, seq, at, actor, action, data)
        updates.append((canonical_json(data), prev, digest, seq))
        prev = digest
    connection = sqlite3.connect(db, isolation_level=None)
    for trigger in ("audit_entries_no_update", "audit_entries_no_delete"):
        connection.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for payload, prev, digest, seq in updates:
        connection.execute("UPDATE audit_entries SET payload = ?, prev_hash = ?, hash = ? WHERE case_id = ? AND "
                           "seq = ?", (payload, prev, digest, case_id, seq))
    connection.close()


def test_a_rewritten_note_with_a_rehashed_chain_and_an_updated_head_fails(exported):
    built, result = exported
    connection = sqlite3.connect(built.db, isolation_level=None)
    note_id, text = connection.execute("SELECT id, text FROM notes ORDER BY id LIMIT 1").fetchone()
    connection.execute("UPDATE notes SET text = 'Rewritten after the report.' WHERE id = ?", (note_id,))
    connection.close()
    _rehash_chain(built.db, built.case_id,
                  lambda data: {**data, "text": "Rewritten after the report."} if data.get("text") == text else data)
    with CaseStore.open(built.db) as store:
        chain = store.verify_chain(built.case_id)
        assert chain.ok, chain.problems  # the forger made the chain consistent again
        head = store.audit_trail(built.case_id)[-1]
    rewrite_manifest(result.manifest_path, lambda data: data["audit_head"].__setitem__("hash", head.hash))
    found = verify_report(result.report_path, built.db).problems
    assert has(found, "manifest: its signature does not verify")
    assert has(found, f"content differs from the database: note {note_id} is not what the report shows")


def test_a_flipped_head_hash_in_the_manifest_is_blamed_on_the_manifest(exported):
    built, result = exported
    flipped = {"0": "1"}
    rewrite_manifest(result.manifest_path, lambda data: data["audit_head"].__setitem__(
        "hash", "".join(flipped.get(c, "0") if i == 0 else c for i, c in enumerate(data["audit_head"]["hash"]))))
    found = verify_report(result.report_path, built.db).problems
    assert has(found, "manifest: its signature does not verify")
    assert has(found, "manifest: its audit head hash", "was edited", "the database's chain verifies")
    assert not has(found, "the trail was changed after the report was made")


def test_a_manifest_re_signed_with_another_key_fails(exported, tmp_path, monkeypatch):
    built, result = exported
    page = result.report_path.read_text(encoding="utf-8")
    result.report_path.write_text(page.replace("same bag", "different bag"), encoding="utf-8")
    manifest = Manifest.from_json(json.loads(result.manifest_path.read_text()), result.manifest_path)
    own = installation_key(create=False)
    monkeypatch.setenv(KEY_VARIABLE, str(tmp_path / "forger.pem"))
    forger = installation_key()
    from dataclasses import replace

    forged = replace(manifest, report_sha256=sha256_file(result.report_path)).signed_with(forger)
    result.manifest_path.write_text(json.dumps(forged.to_json()))
    monkeypatch.setenv(KEY_VARIABLE, str(own.path))
    found = verify_report(result.report_path, built.db, trust=[own.fingerprint]).problems
    assert has(found, "manifest: signed by key", grouped(forger.fingerprint), "which this installation does not trust")
    monkeypatch.setenv(KEY_VARIABLE, str(own.path))
    runner = CliRunner()
    failed = runner.invoke(app, ["report", "verify", str(result.report_path), "--db", str(built.db)])
    assert failed.exit_code == 1 and "does not trust" in failed.output
    wrong = runner.invoke(app, ["report", "verify", str(result.report_path), "--db", str(built.db),
                                "--trust", grouped(forger.fingerprint)])
    assert wrong.exit_code == 0, wrong.output  # trusting the forger's key: the forged manifest is consistent


def test_the_key_is_made_once_owner_only_and_a_damaged_key_is_a_named_error(tmp_path, monkeypatch):
    path = tmp_path / "keys" / "k.pem"
    monkeypatch.setenv(KEY_VARIABLE, str(path))
    assert installation_key(create=False) is None
    first = installation_key()
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert installation_key().fingerprint == first.fingerprint
    path.write_text("-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n")
    with pytest.raises(ReportError, match=r"k\.pem is damaged or not a PEM private key"):
        installation_key()


def _rewrite_note_and_reexport(built, tmp_path, monkeypatch):
    """A forger edits a note in the database, recomputes the audit chain and exports the case again from
    another installation (its own key)."""
    connection = sqlite3.connect(built.db, isolation_level=None)
    note_id, text = connection.execute("SELECT id, text FROM notes ORDER BY id LIMIT 1").fetchone()
    connection.execute("UPDATE notes SET text = 'Rewritten by the forger.' WHERE id = ?", (note_id,))
    connection.close()
    _rehash_chain(built.db, built.case_id,
                  lambda data: {**data, "text": "Rewritten by the forger."} if data.get("text") == text else data)
    monkeypatch.setenv(KEY_VARIABLE, str(tmp_path / "forger" / "key.pem"))
    forged = export_report(built.db, built.case_id, tmp_path / "forged.html")
    forger = installation_key(create=False)
    return forged, forger


def test_a_rehashed_case_re_exported_elsewhere_is_refused_where_no_key_or_only_the_original_is_trusted(
        exported, tmp_path, monkeypatch):
    built, original = exported
    own = installation_key(create=False)
    public = tmp_path / "examiner.pub"
    public.write_bytes(own.public_pem())
    forged, forger = _rewrite_note_and_reexport(built, tmp_path, monkeypatch)
    assert forger.fingerprint != own.fingerprint
    runner = CliRunner()
    # a third machine: neither key, nothing trusted
    monkeypatch.setenv(KEY_VARIABLE, str(tmp_path / "third" / "key.pem"))
    monkeypatch.setenv("LINEUP_TRUSTED_KEYS", str(tmp_path / "third" / "trusted"))
    plain = runner.invoke(app, ["report", "verify", str(forged.report_path), "--db", str(built.db)])
    assert plain.exit_code == 1 and "OK" not in plain.output, plain.output
    assert "which this installation does not trust (it trusts no key yet)" in plain.output
    # the same machine after trusting only the original examiner's key
    trusted = runner.invoke(app, ["key", "trust", str(public)])
    assert trusted.exit_code == 0 and grouped(own.fingerprint) in trusted.output
    again = runner.invoke(app, ["report", "verify", str(forged.report_path), "--db", str(built.db)])
    assert again.exit_code == 1 and "does not trust" in again.output
    # the original report, checked there, names the rewritten note
    first = verify_report(original.report_path, built.db)
    assert not first.ok and has(first.problems, "content differs from the database: note")
    assert any("trusted key" in note for note in first.notes)


def test_keys_export_trust_and_list(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_VARIABLE, str(tmp_path / "a" / "key.pem"))
    monkeypatch.setenv("LINEUP_TRUSTED_KEYS", str(tmp_path / "trusted"))
    runner = CliRunner()
    exported_key = runner.invoke(app, ["key", "export", "--out", str(tmp_path / "a.pub")])
    assert exported_key.exit_code == 0, exported_key.output
    mine = installation_key(create=False)
    assert grouped(mine.fingerprint) in exported_key.output
    assert (tmp_path / "a.pub").read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    monkeypatch.setenv(KEY_VARIABLE, str(tmp_path / "b" / "key.pem"))
    assert runner.invoke(app, ["key", "trust", str(tmp_path / "a.pub")]).exit_code == 0
    assert runner.invoke(app, ["key", "trust", str(tmp_path / "a.pub")]).exit_code == 0  # twice: no change
    listed = runner.invoke(app, ["key", "list"])
    assert grouped(mine.fingerprint) in listed.output and "trusted key" in listed.output
    (tmp_path / "junk.pub").write_text("not a key")
    refused = runner.invoke(app, ["key", "trust", str(tmp_path / "junk.pub")])
    assert refused.exit_code != 0 and "junk.pub holds neither a PEM public key" in refused.output
    assert "Traceback" not in refused.output
    with pytest.raises(ReportError, match="neither a public key file nor a 64-hex-digit"):
        verify_report(tmp_path / "absent.html", tmp_path / "absent.db", trust=["abc"])
