"""The error a pretrained network raises: it names the file and what is wrong with it."""

from __future__ import annotations


class PretrainedModelError(ValueError):
    """A pretrained network cannot be used: a missing, truncated or altered file, an input or output that is
    not the one expected, a batch of the wrong shape, or an unknown model name."""
