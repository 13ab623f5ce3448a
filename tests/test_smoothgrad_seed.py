"""SmoothGrad's noise is drawn from a generator seeded by the request: the same photo, model, class and settings
give the same map, run after run, whatever torch's global generator holds, which is left as it was."""

from __future__ import annotations

import numpy as np
import torch

import engine
from engine.analyses.attributions import SmoothGrad


def test_two_identical_smoothgrad_runs_give_the_same_map(photos):
    model = engine.create_model("vit_cifar", "random", seed=0, device="cpu")
    first = SmoothGrad(model).attribute(photos[0], 3).map
    torch.manual_seed(12345)
    moved = torch.rand(3)  # the global generator moved on: the map must not follow it
    second = SmoothGrad(model).attribute(photos[0], 3).map
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, SmoothGrad(model).attribute(photos[0], 4).map)  # another class, another map
    torch.manual_seed(7)
    SmoothGrad(model).attribute(photos[0], 3)
    after = torch.rand(3)
    torch.manual_seed(7)
    assert torch.equal(after, torch.rand(3))  # the global generator is left as it was
    assert moved.shape == (3,)
