"""What a model costs: parameters and FLOPs of one forward pass (2 per multiply-add, torch's counter)."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode


def params_and_flops(module: nn.Module, shape: tuple[int, ...] = (1, 3, 32, 32)) -> tuple[int, int]:
    """(parameters, FLOPs of one pass on a zero input of `shape`)."""
    device = next(module.parameters()).device
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        module(torch.zeros(shape, device=device))
    return sum(p.numel() for p in module.parameters()), counter.get_total_flops()
