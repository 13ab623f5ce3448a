"""Loss landscapes (paper Fig 1a and C.4a; Li et al., 2018, "Visualizing the Loss Landscape of Neural Nets").

    result = LossLandscape(model).attribute(images, labels)          # NLL + L2 on an 11x11 grid
    result = LossLandscape(model, dims=1).attribute(images, labels)  # 21 points along one direction

The loss NLL + L2 (L2 = weight_decay / 2 * the sum of the squares of every trainable parameter, as in
engine.hessian) at w + a d1 (+ b d2), a and b in [-span, span], around the trained weights w, along
filter-normalized random directions: each direction is drawn Gaussian (seeded) and every filter of it
(the slice along dim 0: a conv's output channel, a linear layer's row) is rescaled to the norm of the
same filter of w. 1-D parameters (biases, BN and LayerNorm scales and shifts) get zero, as Li et al.'s
`ignore='biasbn'` does, and so do the parameters whose names contain a string of `ignore` (by default
position embeddings and relative position tables, as the paper's code does). BN running statistics are
buffers and are not moved; the model is in eval mode (BN uses them; dropout and drop path are off).
The images are used as given (no augmentation). The weights are restored exactly afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import EngineError
from ..models.registry import LoadedModel
from .base import Images, Labels, ModelAnalysis, Progress
from .hessian import l2_term


def filter_normalize(direction: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """`direction` with each filter (slice along dim 0) rescaled to the norm of the same filter of `weight`."""
    dims = tuple(range(1, weight.dim()))
    norm = lambda t: torch.linalg.vector_norm(t, dim=dims, keepdim=True)  # noqa: E731
    return direction * norm(weight) / (norm(direction) + 1e-10)


@dataclass
class LandscapeResult:
    """NLL + L2, NLL and accuracy at w + x d1 (1-D: [i] at x[i]) or w + x d1 + y d2 (2-D: [j][i] at x[i], y[j])."""

    x: list[float]
    y: list[float] | None
    loss: list  # NLL + L2
    nll: list
    accuracy: list
    weight_decay: float
    images: int
    seed: int

    def to_json(self) -> dict:
        return {
            "x": self.x,
            "y": self.y,
            "loss": self.loss,
            "nll": self.nll,
            "accuracy": self.accuracy,
            "weight_decay": self.weight_decay,
            "images": self.images,
            "seed": self.seed,
        }


class LossLandscape(ModelAnalysis):
    """Fig 1a: NLL + L2 around the trained weights along one or two filter-normalized random directions."""

    def __init__(
        self,
        model: LoadedModel,
        dims: int = 2,
        points: int | None = None,
        span: float = 1.0,
        weight_decay: float = 5e-4,
        seed: int = 0,
        batch_size: int = 100,
        ignore: Sequence[str] = ("pos_embed", "relative_position"),
    ) -> None:
        """`points` per axis (None: 21 for 1-D, 11 for 2-D), evenly from -span to span."""
        if dims not in (1, 2):
            raise EngineError(f"a loss landscape has 1 or 2 dimensions, not {dims}")
        points = (21 if dims == 1 else 11) if points is None else points
        if points < 2:
            raise EngineError(f"a loss landscape needs at least 2 points per axis, not {points}")
        super().__init__(model, batch_size)
        self.dims, self.weight_decay, self.seed, self.ignore = dims, weight_decay, seed, tuple(ignore)
        self.coordinates = [span * (2 * i - (points - 1)) / (points - 1) for i in range(points)]

    def _parameters(self) -> list[tuple[str, torch.nn.Parameter]]:
        return [(name, p) for name, p in self.model.module.named_parameters() if p.requires_grad]

    def directions(self) -> list[dict[str, torch.Tensor]]:
        """The `dims` filter-normalized random directions, by parameter name (seeded)."""
        generator = torch.Generator().manual_seed(self.seed)
        directions = []
        for _ in range(self.dims):
            direction = {}
            for name, p in self._parameters():
                d = torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device)
                moved = p.dim() > 1 and not any(key in name for key in self.ignore)
                direction[name] = filter_normalize(d, p.detach()) if moved else torch.zeros_like(p)
            directions.append(direction)
        return directions

    def _evaluate(self, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float, float]:
        """NLL + L2, NLL and accuracy of the model as it stands."""
        logits = self.logits(x)
        nll = float(F.cross_entropy(logits, y))
        l2 = float(l2_term((p for _, p in self._parameters()), self.weight_decay))
        return nll + l2, nll, int((logits.argmax(-1) == y).sum()) / len(y)

    @torch.no_grad()
    def attribute(
        self, images: Images, labels: Labels | None = None, progress: Progress | None = None
    ) -> LandscapeResult:
        """The landscape over `images` (files/PIL/arrays, or a preprocessed batch) and their labels;
        `progress(done, total)` after each grid point."""
        x = self.inputs(images)
        y = self.targets(labels, len(x))
        parameters, directions = self._parameters(), self.directions()
        saved = [p.detach().clone() for _, p in parameters]
        grid = (
            [(a,) for a in self.coordinates]
            if self.dims == 1
            else [(a, b) for b in self.coordinates for a in self.coordinates]
        )
        module = self.model.module
        training = module.training
        module.eval()
        values = []
        try:
            for done, point in enumerate(grid, 1):
                for (name, p), w in zip(parameters, saved):
                    p.copy_(w + sum(c * d[name] for c, d in zip(point, directions)))
                values.append(self._evaluate(x, y))
                if progress:
                    progress(done, len(grid))
        finally:
            for (_, p), w in zip(parameters, saved):
                p.copy_(w)
            module.train(training)
        loss, nll, accuracy = (list(column) for column in zip(*values))
        if self.dims == 2:
            n = len(self.coordinates)
            loss, nll, accuracy = ([column[j * n : (j + 1) * n] for j in range(n)] for column in (loss, nll, accuracy))
        return LandscapeResult(
            self.coordinates,
            self.coordinates if self.dims == 2 else None,
            loss,
            nll,
            accuracy,
            self.weight_decay,
            len(x),
            self.seed,
        )


def headline(result: dict) -> str:
    """Fig 1a's numbers in a line: the loss at the trained weights and the grid's highest."""
    loss = np.array(result["loss"])
    centre = loss[tuple(s // 2 for s in loss.shape)]
    return f"NLL + L2 {centre:.3f} at the trained weights, {loss.max():.4g} at most on the grid"
