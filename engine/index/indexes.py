"""FAISS index per view, chosen by gallery size and device (FAISS's own guidance).

- ``flat``: exact inner product over the stored float16 rows (``IndexScalarQuantizer`` QT_fp16: the same
  numbers as ``vectors/<view>.f16.npy``, half the bytes of ``IndexFlatIP``), up to ``ivf_threshold`` items;
- ``ivf``: ``IndexIVFScalarQuantizer`` (fp16 codes of the rows, not residuals) with nlist ≈ 4√n, nprobe the
  smallest power of two whose recall@100 against exact search, measured on the gallery's own vectors, reaches
  the target;
- on a machine where FAISS sees a GPU, searches run on a GPU copy (flat: ``GpuIndexFlatIP`` with float16
  storage; ivf: ``index_cpu_to_gpu``). Files always hold the CPU index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

from engine.index.errors import GalleryIndexError
from engine.index.scoring import to_float32
from engine.kernel.atomic import atomic_target

DEFAULT_IVF_THRESHOLD = 1_000_000
DEFAULT_RECALL_TARGET = 0.95
RECALL_K = 100
QUERY_NPROBE_FACTOR = 2  # nprobe used = 2 × the one tuned on gallery rows (see ``build``)
_ADD_CHUNK = 65_536
LIST_FILL = 2  # a large top-k search probes lists holding about twice k items (lists differ in size)
_FOURCC = {b"IxSQ": "flat", b"IwSq": "ivf"}


@dataclass(frozen=True)
class IndexSpec:
    """What ``gallery.json`` records about one view's index (advisory: the file itself is the truth)."""

    kind: str
    count: int
    nlist: int | None = None
    nprobe: int | None = None
    recall_at_100: float | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def choose_kind(count: int, ivf_threshold: int = DEFAULT_IVF_THRESHOLD) -> str:
    """``flat`` up to the threshold, ``ivf`` beyond it."""
    return "ivf" if count > ivf_threshold else "flat"


def ivf_nlist(count: int) -> int:
    """Power of two nearest 4√n, with at least 39 training points per list and at least 1 list."""
    target = 4 * math.sqrt(max(count, 1))
    nlist = 2 ** round(math.log2(max(target, 1)))
    return int(max(1, min(nlist, count // 39)))


def empty_flat(dim: int) -> faiss.Index:
    return faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)


def add_rows(index: faiss.Index, vectors: np.ndarray) -> None:
    """Append float16 rows to ``index`` in chunks (FAISS takes float32)."""
    for start in range(0, vectors.shape[0], _ADD_CHUNK):
        index.add(to_float32(np.asarray(vectors[start : start + _ADD_CHUNK])))


def exact_top_k(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Row numbers of the exact top-k inner products (chunked scan over float16 rows)."""
    heap = faiss.ResultHeap(queries.shape[0], k, keep_max=True)
    for start in range(0, vectors.shape[0], _ADD_CHUNK):
        block = to_float32(np.asarray(vectors[start : start + _ADD_CHUNK]))
        scores = queries @ block.T
        kk = min(k, block.shape[0])
        top = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]
        heap.add_result(np.take_along_axis(scores, top, axis=1).astype(np.float32),
                        (top + start).astype(np.int64))
    heap.finalize()
    return heap.I


def recall_at_k(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean over queries of |found ∩ truth| / |truth| (−1 entries in ``found`` are misses)."""
    hits = [len(set(f[f >= 0].tolist()) & set(t[t >= 0].tolist())) / max(1, int((t >= 0).sum()))
            for f, t in zip(found, truth, strict=True)]
    return float(np.mean(hits)) if hits else 1.0


def _row_queries(vectors: np.ndarray, queries: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(gallery rows drawn at random as float32 queries, their exact top-k rows, k)."""
    rng = np.random.default_rng(seed)
    picked = np.sort(rng.choice(vectors.shape[0], size=min(queries, vectors.shape[0]), replace=False))
    xq = to_float32(np.asarray(vectors[picked]))
    k = min(RECALL_K, vectors.shape[0])
    return xq, exact_top_k(vectors, xq, k), k


def tune_nprobe(index: faiss.Index, vectors: np.ndarray, target: float = DEFAULT_RECALL_TARGET,
                queries: int = 200, seed: int = 0) -> tuple[int, float]:
    """Smallest power-of-two nprobe whose recall@100 against exact search reaches ``target``.

    Queries are gallery rows drawn at random; returns (nprobe, measured recall) and sets ``index.nprobe``."""
    ivf = faiss.extract_index_ivf(index)
    xq, truth, k = _row_queries(vectors, queries, seed)
    nprobe, recall = 1, 0.0
    while True:
        ivf.nprobe = nprobe
        _, found = index.search(xq, k)
        recall = recall_at_k(found, truth)
        if recall >= target or nprobe >= ivf.nlist:
            return nprobe, recall
        nprobe = min(nprobe * 2, ivf.nlist)


def measured_recall(index: faiss.Index, vectors: np.ndarray, queries: int = 200, seed: int = 0) -> float:
    """Recall@100 against exact search at the index's current nprobe, gallery rows as queries."""
    xq, truth, k = _row_queries(vectors, queries, seed)
    return recall_at_k(index.search(xq, k)[1], truth)


def build(vectors: np.ndarray, kind: str, recall_target: float = DEFAULT_RECALL_TARGET,
          seed: int = 0) -> tuple[faiss.Index, IndexSpec]:
    """A new index of ``kind`` over all float16 ``vectors`` [n, d]."""
    count, dim = vectors.shape
    if kind == "flat":
        index = empty_flat(dim)
        add_rows(index, vectors)
        return index, IndexSpec("flat", count)
    if kind != "ivf":
        raise ValueError(f"index kind must be 'flat' or 'ivf', got {kind!r}")
    if count == 0:
        raise ValueError("an IVF index needs at least one vector to train on")
    nlist = ivf_nlist(count)
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, faiss.ScalarQuantizer.QT_fp16,
                                          faiss.METRIC_INNER_PRODUCT, False)
    # by_residual=False: codes are the stored float16 rows themselves, so scores within a list are exact
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(count, size=min(count, 64 * nlist), replace=False))
    index.cp.seed = seed
    index.train(to_float32(np.asarray(vectors[sample])))
    add_rows(index, vectors)
    nprobe, recall = tune_nprobe(index, vectors, recall_target, seed=seed)
    # Queries are text (or sketch/IR) vectors, which sit off the gallery images' manifold: on a real gallery of
    # the default model (bench/ivf_recall.py) the row-tuned nprobe gave recall@100 0.90 for real text queries,
    # twice that nprobe 0.98. Search with the safety factor; the recorded recall is the rows' at that nprobe.
    ivf = faiss.extract_index_ivf(index)
    safe = min(ivf.nlist, nprobe * QUERY_NPROBE_FACTOR)
    if safe != nprobe:
        ivf.nprobe = safe
        recall = measured_recall(index, vectors, seed=seed)
    return index, IndexSpec("ivf", count, nlist=nlist, nprobe=safe, recall_at_100=round(recall, 4))


def probes_for(index: faiss.IndexIVF, k: int, allowed: int | None = None) -> int:
    """The nprobe a top-``k`` search uses: the index's own, or enough lists to hold about ``LIST_FILL`` × k items
    (of the ``allowed`` ones, when a selector lets only those through) when k is large (a shortlist), so that
    the search can return k items."""
    eligible = index.ntotal if allowed is None else min(allowed, index.ntotal)
    if eligible <= 0:
        return int(index.nlist)
    wanted = math.ceil(LIST_FILL * k * index.nlist / eligible)
    return int(min(index.nlist, max(index.nprobe, wanted)))


def search_among(index: faiss.Index, queries: np.ndarray, k: int,
                 allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``index.search`` for top-``k`` (an IVF index probing ``probes_for`` lists), restricted to the rows
    ``allowed`` marks when given (a boolean mask over the first rows; the rows past it are left out)."""
    selector = bits = None
    if allowed is not None:
        mask = np.zeros(max(int(index.ntotal), allowed.size), dtype=bool)
        mask[: allowed.size] = allowed
        bits = np.packbits(mask, bitorder="little")
        selector = faiss.IDSelectorBitmap(mask.size, faiss.swig_ptr(bits))
    if isinstance(index, faiss.IndexIVF):
        eligible = None if allowed is None else int(np.count_nonzero(allowed))
        params = faiss.SearchParametersIVF(sel=selector, nprobe=probes_for(index, k, eligible))
    elif selector is not None:
        params = faiss.SearchParameters(sel=selector)
    else:
        params = None
    scores, rows = index.search(queries, k, params=params)
    del bits  # the selector reads the bitmap until the search returns
    return scores, rows


def spec_of(index: faiss.Index, recall: float | None = None) -> IndexSpec:
    if isinstance(index, faiss.IndexIVF):
        return IndexSpec("ivf", int(index.ntotal), nlist=int(index.nlist), nprobe=int(index.nprobe),
                         recall_at_100=recall)
    return IndexSpec("flat", int(index.ntotal))


def peek(path: Path) -> tuple[str, int, int]:
    """(kind, dim, ntotal) from an index file's first 16 bytes, without loading it."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(16)
    except OSError as exc:
        raise GalleryIndexError(f"cannot read index {path}: {exc}") from exc
    kind = _FOURCC.get(raw[:4])
    if len(raw) < 16 or kind is None:
        raise GalleryIndexError(f"index {path} is not a FAISS flat/IVF fp16 index this gallery writes")
    dim = int.from_bytes(raw[4:8], "little", signed=True)
    ntotal = int.from_bytes(raw[8:16], "little", signed=True)
    return kind, dim, ntotal


def load(path: Path, writable: bool = False) -> faiss.Index:
    """Read an index (memory-mapped unless it will be appended to)."""
    flags = 0 if writable else faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY
    try:
        index = faiss.read_index(str(path), flags)
    except RuntimeError as exc:
        reason = str(exc).strip().splitlines()[-1][:200]
        raise GalleryIndexError(f"index {path} is unreadable ({reason})") from None
    if not isinstance(index, faiss.IndexScalarQuantizer | faiss.IndexIVFScalarQuantizer):
        raise GalleryIndexError(f"index {path} holds a {type(index).__name__}, not a gallery index")
    return index


def save(index: faiss.Index, path: Path) -> None:
    """Write ``index`` atomically (temporary file, fsync, rename)."""
    with atomic_target(path) as tmp:
        faiss.write_index(index, str(tmp))


def content_mismatches(index: faiss.Index, vectors: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows among ``rows`` whose stored index code differs from the vectors file."""
    if isinstance(index, faiss.IndexIVF):
        index = faiss.clone_index(index)
        index.make_direct_map()
    decoded = index.reconstruct_batch(rows.astype(np.int64))
    expected = to_float32(np.asarray(vectors[rows]))
    return rows[np.any(decoded != expected, axis=1)]


def gpu_available() -> bool:
    return faiss.get_num_gpus() > 0 if hasattr(faiss, "get_num_gpus") else False


class GpuCopy:
    """A GPU clone of a CPU index for searching (built when FAISS sees a GPU)."""

    def __init__(self, index: faiss.Index, vectors: np.ndarray) -> None:
        self.resources = faiss.StandardGpuResources()
        if isinstance(index, faiss.IndexIVF):
            self.index = faiss.index_cpu_to_gpu(self.resources, 0, index)
        else:
            config = faiss.GpuIndexFlatConfig()
            config.useFloat16 = True
            self.index = faiss.GpuIndexFlatIP(self.resources, index.d, config)
            add_rows(self.index, vectors)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(queries, k)
