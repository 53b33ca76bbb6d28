"""An evidence package from real footage: one of the real clips (``--footage``/``LINEUP_FOOTAGE_DIR``, see
bench/footage_folder.py) is ingested with the shipped networks, the longest track is found again by a real
find-similar step and its items confirmed in a case, then ``lineup report export --package`` and ``report
verify`` run on it, and one byte is changed in each file inside the package to check that verify names it.

Prints the sightings, each segment's frames and whether it was stream-copied, the package's size, the export
and verify times and the files verify named. Not run by the tests (tests/test_report_package.py covers the same
on a generated video)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from footage_folder import footage_folder  # noqa: E402

from app.report import export_package, verify_package  # noqa: E402
from app.report.package_manifest import PACKAGE_MANIFEST  # noqa: E402
from app.store import CaseStore  # noqa: E402
from app.store.from_engine import gallery_identity, step_input  # noqa: E402
from engine.index import Gallery  # noqa: E402
from engine.retrieval.search import SearchSession, StepQuery  # noqa: E402


def ingest(clip: Path, gallery: Path, stride: int) -> None:
    command = [sys.executable, "-m", "lineup", "ingest", str(clip), "--gallery", str(gallery), "--stride",
               str(stride), "--start", "2024-05-06T12:00:00+00:00", "--json"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=os.environ | {"HF_HUB_OFFLINE": "1"})


def confirmed_case(gallery: Gallery, db: Path) -> tuple[int, list[str]]:
    """A case whose one step finds similar to the longest track's middle item; that track's items confirmed."""
    tracks = Counter(item.track for item in gallery.iter_items() if item.track is not None)
    if not tracks:
        raise SystemExit(f"the clip gave no tracked person in {gallery.root}")
    track = tracks.most_common(1)[0][0]
    members = sorted((item for item in gallery.iter_items() if item.track == track), key=lambda i: i.frame)
    session = SearchSession(gallery, None)
    result = session.step(StepQuery(example=members[len(members) // 2].id, k=min(len(gallery), 50)))
    with CaseStore.open(db, actor="bench") as store:
        case = store.create_case("Real footage: one tracked person")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        step_id = store.record_step(case, step_input(result, gallery_id))
        for item in members:
            store.mark(case, gallery_id, item.id, "confirmed", step_id=step_id)
    return case, [item.id for item in members]


def flipped(source: Path, target: Path, name: str) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename == name:
                middle = len(data) // 2
                data = data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:]
            new.writestr(info, data)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--footage", type=Path, default=None)
    parser.add_argument("--clip", default="one-by-one-person-detection.mp4")
    parser.add_argument("--stride", type=int, default=2)
    parser.add_argument("--format", default="html", choices=("html", "pdf"))
    args = parser.parse_args()
    clip = footage_folder(args.footage) / args.clip
    with tempfile.TemporaryDirectory(prefix="lineup-package-bench-") as folder:
        work = Path(folder)
        started = time.perf_counter()
        ingest(clip, work / "gallery", args.stride)
        ingested = time.perf_counter() - started
        gallery = Gallery.open(work / "gallery")
        case, items = confirmed_case(gallery, work / "cases.db")
        started = time.perf_counter()
        result = export_package(work / "cases.db", case, work / "package.zip", report_format=args.format)
        exported = time.perf_counter() - started
        started = time.perf_counter()
        check = verify_package(result.path, work / "cases.db")
        verified = time.perf_counter() - started
        with zipfile.ZipFile(result.path) as archive:
            manifest = json.loads(archive.read(PACKAGE_MANIFEST))
            names = archive.namelist()
        print(f"{clip.name}: {len(gallery)} items ingested (stride {args.stride}) in {ingested:.1f} s; "
              f"{len(items)} items of the longest track confirmed")
        for number, sighting in enumerate(manifest["sightings"], 1):
            print(f"  sighting {number}: {json.dumps({k: v for k, v in sighting.items() if k != 'sources'})}")
            for source in sighting["sources"]:
                print(f"    source: {json.dumps(source)}")
        print(f"package: {result.files} files, {result.size / 1e6:.2f} MB, gaps {list(result.gaps)}; "
              f"export {exported:.2f} s, verify {verified:.2f} s, ok {check.ok} {list(check.problems)}")
        named = 0
        for number, name in enumerate(names):
            changed = verify_package(flipped(result.path, work / f"changed-{number}.zip", name))
            hit = not changed.ok and any(name in problem for problem in changed.problems)
            named += hit
            if not hit:
                print(f"  NOT NAMED: a byte changed in {name}: {list(changed.problems)}")
        print(f"a changed byte named by verify: {named} of {len(names)} files")


if __name__ == "__main__":
    main()
