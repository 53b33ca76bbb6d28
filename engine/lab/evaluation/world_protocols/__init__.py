"""The five protocols on a world's benchmark files (``engine.lab.world.benchmarks``), each one function taking
the model and a loaded benchmark and returning the protocol's part of the report.

- ``mg_separate`` (docs/methods.md §1.2): every per-level query against the RGB HR gallery, each in the gallery
  view of its level; ``by`` the benchmark level; ``overall`` pooled over all queries. ``texts`` picks the
  phrasings: ``generated`` (the training generator's), ``paraphrased`` (the same queries in held-out words
  and frames; in held-out frames with plain words, ``reframed``; and the hand-written set) or ``both``;
  each set's block is in ``text_sets`` and ``overall``/``by`` are the first set's.
- ``mg_progressive`` (docs/methods.md §1.3): every 5-step chain with Top-k reduction ρ; the final list is scored
  against the last step's relevant set; ``steps`` the mean candidate counts and the share of final
  positives still candidates after each step; ``by`` the chain stopped after the step of each level
  (scored against that step's relevant set), so ``by`` of the last level equals ``overall``.
- ``modes`` (FlexiReID, docs/methods.md §4): the seven query modes against the RGB HR gallery via ``model.fuse``;
  a model without fusion uses its plain encoders for T, S and IR and the normalised mean of their unit
  vectors for combined modes (said in ``fusion``); ``overall`` pooled over all (query, mode) pairs;
  ``oracle`` the attribute oracle's ceiling per single mode (``engine.lab.evaluation.oracle``).
- ``cross_resolution`` (CRST): text queries; ``by`` a gallery of one resolution level each, every item
  encoded with its own resolution label (the same images at every level); ``overall`` pooled over the
  four; ``mixed`` one gallery of every image at a seeded level.
- ``anytime`` (Uni-AT, docs/methods.md §3): ``encode_reid`` per scenario with ``anytime_masks``; ``overall`` the
  mean of the six scenario blocks; ``by["any-time"]`` = {"score": mean of the six R@1 and the six mAP,
  "R@1": mean R@1, "mAP": mean mAP}; ``oracle`` the attribute oracle's ceiling per scenario when the benchmark's
  items carry attributes (same clothes: every shared attribute; clothing change: the biometrics; no colour
  with IR); ``heads`` the same scenarios ranked by the model's own attribute heads on the oracle's keys
  (``engine.lab.evaluation.attribute_reading``) when the model has them, and ``outfit_change`` find-similar with and
  without "clothes may have changed" on galleries holding both kinds of sighting (``engine.lab.evaluation.
  outfit_change``).

Every report states its benchmark's relevance rule (``relevance``). Gallery images are encoded once per
view they need; vectors never leave the CPU as more than Q×G floats.

One module per protocol family: ``granularity`` (the two MG-Eval protocols), ``query_modes``, ``resolution``
and ``any_time``; ``common`` holds what they share.
"""

from engine.lab.evaluation.world_protocols.any_time import anytime
from engine.lab.evaluation.world_protocols.common import Report
from engine.lab.evaluation.world_protocols.granularity import (
    TEXT_CHOICES,
    TEXT_SETS,
    mg_progressive,
    mg_separate,
    text_sets,
)
from engine.lab.evaluation.world_protocols.query_modes import modes
from engine.lab.evaluation.world_protocols.resolution import WORLD_RESOLUTIONS, cross_resolution

__all__ = [
    "TEXT_CHOICES",
    "TEXT_SETS",
    "WORLD_RESOLUTIONS",
    "Report",
    "anytime",
    "cross_resolution",
    "mg_progressive",
    "mg_separate",
    "modes",
    "text_sets",
]
