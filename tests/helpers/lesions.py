"""What switching a unit off must do to a model, checked on any model."""

from __future__ import annotations

import numpy as np
import torch

import engine
from engine.analyses.lesion import Lesion


def check_lesion(model: engine.LoadedModel, unit: int, photos) -> None:
    """Switching `unit` off changes the output and that unit's curves but not the block before it;
    switching it back on restores the output bit for bit."""
    analyzer = engine.Analyzer(model)
    x = analyzer.inputs(photos[:1])
    with torch.inference_mode():
        before = model.module(x)
        with Lesion(model, [unit]):
            lesioned = model.module(x)
            curves = analyzer.attribute(photos[:1])
        after = model.module(x)
    assert not torch.equal(before, lesioned) and torch.equal(before, after)
    plain = analyzer.attribute(photos[:1])
    assert curves.blocks[unit].variance != plain.blocks[unit].variance
    np.testing.assert_array_equal(curves.blocks[unit - 1].fourier, plain.blocks[unit - 1].fourier)
