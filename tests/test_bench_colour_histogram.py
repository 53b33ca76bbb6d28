"""bench/colour_histogram_heads.py: a colour reader learnt on a world's crops, scored on labelled footage —
on a painted world and a painted clip whose clothing colours it must read back."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from bench_modules import load_bench

BGR = {"red": (40, 40, 210), "blue": (200, 60, 30), "black": (20, 20, 20), "white": (235, 235, 235)}


def _person(height: int, width: int, top: str, bottom: str) -> np.ndarray:
    crop = np.full((height, width, 3), 128, np.uint8)
    crop[int(0.18 * height):int(0.52 * height)] = BGR[top]
    crop[int(0.50 * height):int(0.88 * height)] = BGR[bottom]
    return crop


@pytest.fixture(scope="module")
def painted(tmp_path_factory):
    root = tmp_path_factory.mktemp("painted")
    world, footage = root / "world", root / "footage"
    (world / "images").mkdir(parents=True)
    footage.mkdir()
    rows = []
    for i in range(24):
        top, bottom = ("red", "blue")[i % 2], ("black", "white")[(i // 2) % 2]
        cv2.imwrite(str(world / "images" / f"{i}.png"), _person(256, 128, top, bottom))
        rows.append({"id": i, "image": f"images/{i}.png", "identity": i, "outfit": 0, "camera": "c1",
                     "modality": "rgb", "resolution": "HR", "descriptions": {},
                     "attributes": {"top_color": top, "bottom_color": bottom}})
    rows.append({**rows[0], "id": 99, "modality": "ir", "attributes": {}})
    (world / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    people = {"p1": ("red", "white", [40, 20, 60, 180]), "p2": ("blue", "black", [220, 20, 60, 180])}
    writer = cv2.VideoWriter(str(footage / "clip.avi"), cv2.VideoWriter_fourcc(*"MJPG"), 10, (400, 240))
    for _ in range(4):
        frame = np.full((240, 400, 3), 90, np.uint8)
        for top, bottom, (x, y, w, h) in people.values():
            frame[y:y + h, x:x + w] = _person(h, w, top, bottom)
        writer.write(frame)
    writer.release()
    clips = {"clip.avi": {pid: {"attributes": {"top_color": top, "bottom_color": bottom},
                                "boxes": [{"frame": f, "box": box} for f in (0, 2)]}
                          for pid, (top, bottom, box) in people.items()}}
    (footage / "people.json").write_text(json.dumps({"clips": clips}), encoding="utf-8")
    return world, footage


def test_a_reader_learnt_on_painted_crops_reads_the_painted_clip(painted, tmp_path, capsys):
    world, footage = painted
    out = tmp_path / "table.json"
    bench = load_bench("colour_histogram_heads")
    assert bench.main(["--world", str(world), "--images", "24", "--people", str(footage / "people.json"),
                       "--footage", str(footage), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    rendered = next(r for r in report["rows"] if not r["realism"] and not r["grey_world"])
    assert rendered["top_color"] == {"accuracy": 1.0, "n": 4}
    assert rendered["bottom_color"] == {"accuracy": 1.0, "n": 4}
    assert len(report["rows"]) == 4 and report["majority"] == {"top_color": 0.5, "bottom_color": 0.5}
    assert "majority guess" in capsys.readouterr().out


def test_the_band_features_are_a_histogram_plus_mean_and_spread():
    bench = load_bench("colour_histogram_heads")
    crop = cv2.cvtColor(_person(256, 128, "red", "black"), cv2.COLOR_BGR2RGB)
    top = bench.band_features(crop, bench.BANDS["top_color"], grey_world=False)
    assert top.shape == (bench.BINS ** 3 + 6,)
    assert np.sum(top[:bench.BINS ** 3] ** 2) == pytest.approx(1.0)  # square roots of shares
    assert np.count_nonzero(top[:bench.BINS ** 3]) == 1  # one flat colour fills the band
    bottom = bench.band_features(crop, bench.BANDS["bottom_color"], grey_world=False)
    assert not np.allclose(top, bottom)


def test_a_folder_without_a_manifest_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        load_bench("colour_histogram_heads").main(["--world", str(tmp_path)])
    assert "world manifest" in capsys.readouterr().err
