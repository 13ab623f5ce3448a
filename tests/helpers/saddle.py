"""A model whose loss Hessian is known in closed form: a saddle at its starting weights."""

from __future__ import annotations

import torch
from torch import nn


class Saddle(nn.Module):
    """Logits (z, 0), z = sum(c * w**2) / 2, at w = 0: with label 0 the NLL's Hessian is -diag(c) / 2
    (dNLL/dz = softmax(z)_0 - 1 = -1/2, dz/dw = 0, d2z/dw2 = diag(c))."""

    def __init__(self, c: list[float]) -> None:
        super().__init__()
        self.register_buffer("c", torch.tensor(c, dtype=torch.float64))
        self.w = nn.Parameter(torch.zeros(len(c), dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = (self.c * self.w**2).sum() / 2
        return torch.stack([z.expand(len(x)), torch.zeros(len(x), dtype=z.dtype)], 1)
