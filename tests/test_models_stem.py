"""Image stems (docs/methods.md §6): the MobileNetV2 stem, its ImageNet weights and their errors."""

import pytest
import torch
from torchvision.models import mobilenet_v2

from engine.kernel.resources import resource_path
from engine.lab.train.stem_weights import StemWeightsError, load_mobilenetv2_weights
from engine.retrieval.models import create, load_config
from engine.retrieval.models.stem import MobileNetV2Stem

SHIPPED = resource_path("models", "backbones", "mobilenetv2_imagenet.pt")


def _mobilenet_tiny():
    return load_config("tiny").with_overrides(
        {"vision": {"stem": "mobilenetv2", "patch_size": 16, "image_size": [64, 32], "stem_channels": []}})


def test_the_stem_gives_the_token_grid_of_its_stride():
    torch.manual_seed(0)
    model = create(_mobilenet_tiny(), device="cpu").eval()
    stem = model.backbone.visual.conv1
    assert isinstance(stem, MobileNetV2Stem)
    assert stem(torch.randn(2, 3, 64, 32)).shape == (2, model.config.vision.width, 4, 2)
    vectors = model.encode_images(torch.randn(3, 3, 64, 32))
    assert vectors.shape == (3, model.config.embed_dim)


def test_shipped_imagenet_weights_load_into_the_stem():
    stem = MobileNetV2Stem(width=32)
    assert load_mobilenetv2_weights(stem, SHIPPED) == len(stem.features.state_dict())
    shipped = torch.load(SHIPPED, map_location="cpu", weights_only=True)
    torch.testing.assert_close(stem.features[0][0].weight, shipped["features.0.0.weight"])
    projection = shipped["features.13.conv.6.weight"]  # block 13's last 1×1 convolution
    torch.testing.assert_close(stem.features[13].conv[2].weight, projection)
    # the same tensors saved in torchvision's own key layout load as well
    reference = mobilenet_v2(weights=None)
    reference.features.load_state_dict(dict(zip(reference.features.state_dict(), shipped.values(), strict=True)))
    other = MobileNetV2Stem(width=32)
    load_mobilenetv2_weights(other, _saved(reference.state_dict()))
    torch.testing.assert_close(other.features[5].conv[0][0].weight, stem.features[5].conv[0][0].weight)


def _saved(state, name="weights.pt"):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / name
    torch.save(state, path)
    return path


def test_stem_weight_errors_name_the_file_and_the_problem(tmp_path):
    stem = MobileNetV2Stem(width=32)
    with pytest.raises(StemWeightsError, match="no such file"):
        load_mobilenetv2_weights(stem, tmp_path / "missing.pt")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint")
    with pytest.raises(StemWeightsError, match="garbage.pt: not a readable PyTorch state dict"):
        load_mobilenetv2_weights(stem, garbage)
    with pytest.raises(StemWeightsError, match="3 MobileNetV2 feature tensors, the stem needs"):
        load_mobilenetv2_weights(stem, _saved({f"features.{i}.weight": torch.zeros(1) for i in range(3)}))
    narrow = mobilenet_v2(weights=None, width_mult=0.5).state_dict()
    with pytest.raises(StemWeightsError, match="width multiplier 1.0"):
        load_mobilenetv2_weights(stem, _saved(narrow))


def test_the_stem_needs_its_stride_as_patch_size():
    from engine.retrieval.models.config import ConfigError

    with pytest.raises(ConfigError, match="must be 16 for the mobilenetv2 stem"):
        load_config("tiny").with_overrides({"vision": {"stem": "mobilenetv2", "patch_size": 8}})
