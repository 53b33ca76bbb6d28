"""`lineup search` and `lineup gallery info|verify|rebuild` on a gallery ingested from a tiny world."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from engine.index import Gallery
from engine.lab.world.build import build_world
from engine.retrieval.models import create, save
from engine.retrieval.models.config import load_config
from lineup.cli import app

IDENTITIES, IMAGES = 8, 4
TEXTS = ["a man", "a man in a red jacket", "a tall young man in a red jacket and blue jeans with a backpack"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(gallery folder, checkpoint folder, world folder): the world's RGB and IR images ingested."""
    from engine.ingest import ModelEncoder, ingest

    root = tmp_path_factory.mktemp("search_cli")
    build_world(root / "world", identities=IDENTITIES, images_per_identity=IMAGES, seed=0)
    torch.manual_seed(0)
    model = create("tiny", device="cpu")
    checkpoint = save(model, root / "checkpoint")
    ingest(root / "world", root / "gallery", ModelEncoder(model))
    return root / "gallery", checkpoint, root / "world"


def search(built, *args, stdin=None):
    gallery, checkpoint, _ = built
    return CliRunner().invoke(app, ["search", "--gallery", str(gallery), "--checkpoint", str(checkpoint),
                                    "--device", "cpu", *args], input=stdin)


def search_json(built, *args):
    result = search(built, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def snapshot(folder):
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_three_steps_narrow_by_ceil_rho_and_report_items(built):
    gallery = Gallery.open(built[0])
    count = len(gallery)
    assert count == IDENTITIES * IMAGES * 3 // 4  # sketches are queries, not gallery items
    report = search_json(built, "--text", TEXTS[0], "--then", TEXTS[1], "--then", TEXTS[2], "--keep", "0.3",
                         "--top", "4")
    assert set(report) == {"steps", "final"}
    expected = count
    for number, (step, text) in enumerate(zip(report["steps"], TEXTS, strict=True), start=1):
        assert {"query", "attributes", "level", "candidates_before", "candidates_after", "top"} <= set(step)
        assert step["step"] == number and step["query"] == text and step["kind"] == "text"
        assert step["candidates_before"] == expected
        expected = math.ceil(0.3 * expected)
        assert step["candidates_after"] == expected
        assert step["keep"] == {"rule": "rho", "value": 0.3, "k": expected}
        assert step["level_source"] == "parser" and step["view"] == f"text:{step['level']}"
        assert len(step["top"]) == min(4, step["candidates_before"])
        scores = [item["score"] for item in step["top"]]
        assert scores == sorted(scores, reverse=True)
    assert [s["candidates_before"] for s in report["steps"]] == [24, 8, 3]
    first, second, third = report["steps"]
    assert first["attributes"] == {"gender": "male"} and first["level"] == "UC"
    assert second["attributes"] == {"gender": "male", "top_type": "jacket", "top_color": "red"}
    assert third["level"] == "C" and len(third["attributes"]) == 8
    final = report["final"]
    assert [item["rank"] for item in final] == [1, 2, 3, 4]
    assert [i["id"] for i in final[:1]] == [i["id"] for i in third["top"][:1]]  # the last step leads
    assert {i["id"] for i in final[1:3]} == {i["id"] for i in third["top"][1:3]}
    identities = {str(i) for i in range(IDENTITIES)}
    for item in final + [i for s in report["steps"] for i in s["top"]]:
        assert item["identity"] in identities and item["id"] in gallery
        assert item["camera"].startswith("cam") and isinstance(item["time"], float)
        assert item["modality"] in ("rgb", "ir") and item["resolution"] in ("HR", "mild", "mid", "ultra")
        assert (built[0] / item["crop"]).is_file() and item["crop_path"].endswith(item["crop"])
        assert -1.001 <= item["score"] <= 1.001


def test_step_scores_are_exact_cosines_over_the_survivors(built):
    from engine.retrieval.encoding.model_encoder import ModelQueryEncoder
    from engine.retrieval.models import load

    # attribute weight 0: the similarity alone (the hybrid score is tested in test_search_hybrid.py)
    report = search_json(built, "--text", TEXTS[0], "--then", TEXTS[1], "--top", "24", "--attribute-weight", "0")
    gallery = Gallery.open(built[0])
    encoder = ModelQueryEncoder(load(built[1], device="cpu"))
    first, second = report["steps"]
    survivors = {item["id"] for item in first["top"][: first["candidates_after"]]}
    assert {item["id"] for item in second["top"]} == survivors
    for step, text in ((first, TEXTS[0]), (second, TEXTS[1])):
        vectors = gallery.vectors(step["view"], gallery.rows([i["id"] for i in step["top"]]))
        np.testing.assert_allclose([i["score"] for i in step["top"]], vectors @ encoder.encode_text(text),
                                   atol=1e-5)


def test_human_output_shows_query_attributes_level_counts_and_items(built):
    result = search(built, "--text", TEXTS[0], "--then", TEXTS[1], "--top", "2")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "step 1: text 'a man'" in out and "attributes: gender=male" in out
    assert "level: UC (parser)   view: text:UC" in out and "candidates: 24 → 12 (keep ρ=0.5 → top 12)" in out
    assert "candidates: 12 → 6" in out and "final ranking (top 2 of 24):" in out
    assert out.count("identity ") == 2 * 2 + 2 and "crops/" in out


def test_camera_and_time_filters(built):
    gallery = Gallery.open(built[0])
    cameras = [gallery.item(row).camera for row in range(len(gallery))]
    camera = max(set(cameras), key=cameras.count)
    report = search_json(built, "--text", TEXTS[0], "--camera", camera, "--top", "24")
    step = report["steps"][0]
    assert step["candidates_before"] == len(gallery)
    assert step["filtered_out"] == len(gallery) - cameras.count(camera)
    assert step["candidates_after"] == math.ceil(0.5 * cameras.count(camera))
    assert {item["camera"] for item in step["top"]} == {camera}
    times = sorted(gallery.item(row).time for row in range(len(gallery)))
    middle = times[len(times) // 2]
    report = search_json(built, "--text", TEXTS[0], "--after", str(middle), "--top", "24")
    assert all(item["time"] >= middle for item in report["steps"][0]["top"])
    assert report["steps"][0]["filtered_out"] == sum(t < middle for t in times)


def test_keep_k_threshold_and_level_override(built):
    report = search_json(built, "--text", TEXTS[0], "--then", TEXTS[1], "--then", TEXTS[2], "--keep", "7")
    assert [(s["candidates_before"], s["candidates_after"]) for s in report["steps"]] == [(24, 7), (7, 7), (7, 7)]
    assert report["steps"][0]["keep"]["rule"] == "k"
    one = search_json(built, "--text", TEXTS[0], "--keep", "1")
    assert one["steps"][0]["candidates_after"] == 1
    scores = [i["score"] for i in search_json(built, "--text", TEXTS[0], "--top", "24")["steps"][0]["top"]]
    cut = scores[4]
    kept = search_json(built, "--text", TEXTS[0], "--threshold", repr(cut))["steps"][0]["candidates_after"]
    assert kept == sum(s >= cut for s in scores) >= 5
    fixed = search_json(built, "--text", TEXTS[0], "--level", "F")["steps"][0]
    assert (fixed["level"], fixed["level_source"], fixed["view"]) == ("F", "override", "text:F")
    classified = search_json(built, "--text", TEXTS[0], "--level", "classifier")["steps"][0]
    assert classified["level_source"] == "classifier"


def test_sketch_and_ir_steps_search_the_rgb_view(built):
    world = built[2]
    sketch = next((world / "images").rglob("*.png"))
    report = search_json(built, "--text", "a woman", "--sketch", str(sketch))
    step = report["steps"][0]
    assert step["kind"] == "text+sketch" and step["view"] == "rgb" and step["sketch"] == str(sketch)
    alone = search_json(built, "--ir", str(sketch))["steps"][0]
    assert alone["kind"] == "ir" and alone["level"] is None and alone["attributes"] == {}


def test_find_similar_as_the_first_step_with_and_without_a_change_of_clothes(built):
    gallery = Gallery.open(built[0])
    example = gallery.ids[3]
    plain = search_json(built, "--similar", example, "--keep", "5", "--then", "a person")
    assert plain["steps"][0]["view"] == "rgb" and plain["steps"][0]["example"] == example
    assert plain["steps"][1]["candidates_before"] == 5
    changed = search_json(built, "--similar", example, "--outfit-changed", "--keep", "5")
    assert changed["steps"][0]["view"] == "biometrics"
    assert changed["steps"][0]["top"][0]["explanation"]["rule"] == "biometrics"
    assert_clean_error(search(built, "--outfit-changed", "--text", "a man"), "--outfit-changed", "--similar ID")
    assert_clean_error(search(built, "--similar", example, "--text", "a man"), "--similar ID", "not both")
    assert_clean_error(search(built, "--similar", "nobody"), "nobody", "not in the gallery")


def test_interactive_steps_undo_branch_marks_and_final(built):
    lines = "\n".join([TEXTS[0], TEXTS[1], ":undo", ":steps", TEXTS[1], ":branch 1", ":branches", ":reject #1",
                       ":bogus", TEXTS[2], ":confirm #2", ":final 3", ":switch 1", ":steps", ":quit",
                       "never read"]) + "\n"
    result = search(built, "--interactive", "--json", stdin=lines)
    assert result.exit_code == 0, result.output
    out = [json.loads(line) for line in result.stdout.splitlines()]
    step1, step2, undone, listed, step2b, branched, branches, rejected, step3, confirmed, final, switched, again = out
    assert (step1["candidates_before"], step1["candidates_after"]) == (24, 12)
    assert undone == {"undone": 2, "steps": 1, "top": step1["top"]}  # the list #R now refers to
    assert [s["step"] for s in listed["steps"]] == [1]
    assert step2b["step"] == 2 and step2b["candidates_before"] == 12 and step2b["top"] == step2["top"]
    assert branched == {"branch": 2, "from_step": 1, "steps": 1, "top": step1["top"]}
    assert [b["steps"] for b in branches["branches"]] == [2, 1]
    assert rejected == {"rejected": step1["top"][0]["id"]}  # rank 1 of the branch's step 1, on screen
    assert step3["step"] == 2 and step3["candidates_before"] == 11  # branch holds step 1; one item rejected
    assert rejected["rejected"] not in {i["id"] for i in step3["top"]}
    assert confirmed == {"confirmed": step3["top"][1]["id"]}
    assert final["final"][0]["id"] == confirmed["confirmed"] and final["final"][0]["confirmed"] is True
    assert len(final["final"]) == 3
    assert switched["branch"] == 1 and switched["steps"] == 2 and switched["top"] == step2b["top"]
    assert [s["step"] for s in again["steps"]] == [1, 2]
    assert "unknown command ':bogus'" in result.stderr


def test_interactive_rank_after_undo_refers_to_the_list_on_screen(built):
    lines = "\n".join([TEXTS[0], TEXTS[1], ":undo", ":confirm #3", ":undo", ":confirm #1"]) + "\n"
    result = search(built, "--interactive", "--json", stdin=lines)
    assert result.exit_code == 0, result.output
    step1, step2, undone, confirmed, undone_again = [json.loads(line) for line in result.stdout.splitlines()]
    assert step1["top"] != step2["top"]
    assert undone["top"] == step1["top"]
    assert confirmed == {"confirmed": step1["top"][2]["id"]}  # rank 3 of step 1, not of the undone step 2
    assert undone_again == {"undone": 1, "steps": 0, "top": []}
    assert "the list on screen has ranks 1..0" in result.stderr  # nothing on screen after undoing every step


def test_interactive_text_output_and_errors_keep_the_prompt_alive(built):
    lines = ":undo\n   \n:reject nothing-like-this\n" + TEXTS[0] + "\n:final\n"
    result = search(built, "--interactive", "--text", TEXTS[1], stdin=lines)
    assert result.exit_code == 0, result.output
    assert "step 1: text 'a man in a red jacket'" in result.stdout and "undid step 1" in result.stdout
    assert "step 1: text 'a man'" in result.stdout and "final ranking (top 10 of 24)" in result.stdout
    assert "matches no item" in result.stderr


def test_gallery_info_verify_rebuild(built, tmp_path):
    runner = CliRunner()
    info = runner.invoke(app, ["gallery", "info", str(built[0])])
    assert info.exit_code == 0 and "items: 24   identities: 8" in info.stdout and "text:UC" in info.stdout
    data = json.loads(runner.invoke(app, ["gallery", "info", str(built[0]), "--json"]).stdout)
    assert data["count"] == 24 and "reid:AD-LT" in data["views"]
    clean = runner.invoke(app, ["gallery", "verify", str(built[0])])
    assert clean.exit_code == 0 and "no problems found" in clean.stdout
    broken = tmp_path / "g"
    shutil.copytree(built[0], broken)
    (broken / "index" / "text_UC.faiss").write_bytes(b"not an index")
    crop = Gallery.open(built[0]).item(0).crop
    (broken / crop).unlink()
    found = runner.invoke(app, ["gallery", "verify", str(broken), "--json"])
    assert found.exit_code == 1
    kinds = {p["kind"] for p in json.loads(found.stdout)["problems"]}
    assert kinds == {"missing_crop", "index_unreadable"}
    text = runner.invoke(app, ["gallery", "verify", str(broken)])
    assert text.exit_code == 1 and "2 problems" in text.stdout and "lineup gallery rebuild" in text.stdout
    rebuilt = runner.invoke(app, ["gallery", "rebuild", str(broken)])
    assert rebuilt.exit_code == 0 and "rebuilt every index" in rebuilt.stdout
    after = json.loads(runner.invoke(app, ["gallery", "verify", str(broken), "--json"]).stdout)
    assert [p["kind"] for p in after["problems"]] == ["missing_crop"]
    assert runner.invoke(app, ["gallery", "verify", str(broken), "--no-crops"]).exit_code == 0
    missing = runner.invoke(app, ["gallery", "info", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def assert_clean_error(result, *fragments):
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_bad_input_is_one_line_exit_2_and_writes_nothing(built, tmp_path):
    gallery = built[0]
    before = snapshot(gallery)
    garbage = tmp_path / "sketch.png"
    garbage.write_bytes(b"\x89PNG not really")
    cases = [
        (["--text", "   "], ["the query is empty"]),
        ([], ["the query is empty"]),
        (["--text", TEXTS[0], "--then", " "], ["--then step 2 is empty"]),
        (["--text", TEXTS[0], "--sketch", str(garbage)], [str(garbage), "not a readable image"]),
        (["--ir", str(tmp_path / "absent.png")], [str(tmp_path / "absent.png"), "does not exist"]),
        (["--text", TEXTS[0], "--keep", "0"], ["--keep"]),
        (["--text", TEXTS[0], "--keep", "1.5"], ["--keep"]),
        (["--text", TEXTS[0], "--keep", "half"], ["--keep"]),
        (["--text", TEXTS[0], "--keep", "3", "--threshold", "0.1"], ["not both"]),
        (["--text", TEXTS[0], "--level", "XL"], ["--level"]),
        (["--text", TEXTS[0], "--camera", "cam99"], ["cam99", "not in the gallery"]),
        (["--text", TEXTS[0], "--after", "tomorrow"], ["--after"]),
        (["--text", TEXTS[0], "--after", "2000", "--before", "1000"], ["later than --before"]),
    ]
    for args, fragments in cases:
        assert_clean_error(search(built, *args), *fragments)
    assert snapshot(gallery) == before


def test_gallery_and_checkpoint_problems_are_clear_errors(built, tmp_path):
    runner = CliRunner()
    checkpoint = built[1]
    absent = runner.invoke(app, ["search", "--gallery", str(tmp_path / "none"), "--checkpoint", str(checkpoint),
                                 "--text", "a man"])
    assert_clean_error(absent, "gallery folder", "does not exist")
    broken = tmp_path / "broken"
    shutil.copytree(built[0], broken)
    (broken / "index" / "rgb.faiss").write_bytes(b"garbage")
    before = snapshot(broken)
    corrupt = runner.invoke(app, ["search", "--gallery", str(broken), "--checkpoint", str(checkpoint),
                                  "--text", "a man"])
    assert_clean_error(corrupt, "rgb.faiss", "lineup gallery rebuild")
    assert snapshot(broken) == before
    config = load_config("tiny").to_dict()
    config["embed_dim"] = 16
    narrow = save(create(config, device="cpu"), tmp_path / "narrow")
    before = snapshot(built[0])
    result = runner.invoke(app, ["search", "--gallery", str(built[0]), "--checkpoint", str(narrow), "--text", "a man"])
    assert_clean_error(result, "32-dimensional", "gives 16")
    torch.manual_seed(5)
    other = save(create("tiny", device="cpu"), tmp_path / "other")
    result = runner.invoke(app, ["search", "--gallery", str(built[0]), "--checkpoint", str(other), "--text", "a man"])
    assert_clean_error(result, "fingerprint", "does not match")
    assert snapshot(built[0]) == before


def test_without_checkpoint_and_without_a_shipped_default_the_error_says_what_to_do(built, monkeypatch):
    from engine.retrieval.models import discovery as sources

    monkeypatch.setattr(sources, "DEFAULT_CHECKPOINT", ("checkpoints", "not-shipped"))
    result = CliRunner().invoke(app, ["search", "--gallery", str(built[0]), "--text", "a man"])
    assert_clean_error(result, "no default checkpoint is shipped", "--checkpoint")
