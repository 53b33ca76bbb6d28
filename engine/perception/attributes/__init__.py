"""Attribute evidence read directly from a person crop's pixels (no learned weights).

``extract_attributes(crop_bgr, mask=None, scene_bgr=None) -> AttributeEvidence``: colour names of the top,
bottom, hair and hat in the 12 ontology colours (6 for hair), hat presence, sleeve and leg length, each as
value → probability with a confidence. Modules: ``inputs`` (checks), ``mask`` (silhouette), ``regions``
(body bands), ``constancy`` (illuminant), ``skin`` (YCrCb skin), ``colors`` (naming), ``garments``
(lengths, hat), ``evidence`` (the result and its JSON form), ``extract`` (the pipeline).

For search: ``model_heads`` (evidence from a checkpoint's attribute heads), ``store`` (a gallery's evidence
table on disk), ``gallery`` (computing it for items: the ingest hook ``add_evidence``, ``refresh_evidence``),
``agreement`` (the hybrid ranking's math), ``ranking`` (a step's attribute term and explanations),
``objects`` (carried objects found by the detector → ``carrying_type`` evidence, the "objects" source) and
``carried_accuracy`` (scoring that source against labels).
"""

from engine.perception.attributes.evidence import AttributeEvidence, AttributeEvidenceError
from engine.perception.attributes.extract import extract_attributes
from engine.perception.attributes.inputs import AttributeInputError

__all__ = ["AttributeEvidence", "AttributeEvidenceError", "AttributeInputError", "extract_attributes"]
