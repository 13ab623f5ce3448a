"""Feature-map similarity between blocks (paper Fig 10a): linear minibatch CKA (Nguyen et al., 2021).

    result = FeatureSimilarity(model).attribute(images)          # every pair of blocks of one model
    result = FeatureSimilarity(model, other).attribute(images)   # the blocks of one model against another's

Each block's latent, brought to (B, C, H, W) as everywhere else (MEASUREMENTS.md section 2), is
flattened to (B, C*H*W); per minibatch the linear Gram matrix K = X X^T goes into the unbiased HSIC
estimator HSIC_1 (Song et al., 2012), and CKA(X, Y) = sum_b HSIC_1(K_b, L_b) / sqrt(sum_b HSIC_1(K_b, K_b)
* sum_b HSIC_1(L_b, L_b)) over the minibatches b. ckatorch computes HSIC_1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from ..data.images import load_image
from ..errors import EngineError
from ..models.registry import LoadedModel
from .base import Images, Labels, ModelAnalysis, Progress
from .block_measures import watch_latents
from .measure import to_bchw


def tick_labels(kinds: Sequence[str]) -> list[str]:
    """Fig 10a's axis labels: "E" for the stem/embedding, "P" for a pooling (subsampling) block, else the index."""
    return ["E" if kind == "embed" else "P" if kind == "pool" else str(i) for i, kind in enumerate(kinds)]


@dataclass
class SimilarityResult:
    """CKA between the blocks of `rows` (a model) and of `columns` (the same or another model)."""

    rows: str
    columns: str
    row_kinds: list[str]
    column_kinds: list[str]
    cka: list[list[float]]  # cka[i][j]: block i of rows against block j of columns
    images: int
    batch_size: int

    def to_json(self) -> dict:
        return {
            "rows": self.rows,
            "columns": self.columns,
            "row_kinds": self.row_kinds,
            "column_kinds": self.column_kinds,
            "row_labels": tick_labels(self.row_kinds),
            "column_labels": tick_labels(self.column_kinds),
            "cka": self.cka,
            "images": self.images,
            "batch_size": self.batch_size,
        }


class FeatureSimilarity(ModelAnalysis):
    """Fig 10a: how alike the feature maps of every pair of blocks are, over a set of images."""

    min_batch_size = 4  # HSIC_1 divides by n - 3

    def __init__(self, model: LoadedModel, other: LoadedModel | None = None, batch_size: int = 100) -> None:
        super().__init__(model, batch_size)
        self.other = other

    def _grams(self, model: LoadedModel, x: torch.Tensor) -> torch.Tensor:
        """(blocks, B, B) float64 linear Gram matrices of every block's flattened latent."""
        specs = model.spec.blocks(model.module)
        grams: list[torch.Tensor | None] = [None] * len(specs)

        def keep(index: int, latent) -> None:
            flat = to_bchw(latent, specs[index]).detach().flatten(1).double()
            grams[index] = flat @ flat.T

        handles = watch_latents(specs, keep)
        try:
            with torch.inference_mode():
                self.forward(x, model)
        finally:
            for handle in handles:
                handle.remove()
        return torch.stack([g.cpu() for g in grams])

    def attribute(
        self, images: Images, labels: Labels | None = None, progress: Progress | None = None
    ) -> SimilarityResult:
        """CKA over `images` (files/PIL/arrays, or a batch preprocessed for both models) in minibatches;
        a last batch smaller than 4 images is left out. Labels are not used."""
        other = self.other or self.model
        if isinstance(images, torch.Tensor):
            images = self.inputs(images)
        count = len(images)
        starts = [s for s in range(0, count, self.batch_size) if min(count - s, self.batch_size) >= 4]
        if not starts:
            raise EngineError(f"minibatch CKA needs at least 4 images, got {count}")
        xy = xx = yy = None
        from ckatorch.hsic import hsic1  # here: ckatorch brings seaborn and matplotlib, a second to import

        for done, start in enumerate(starts, 1):
            stop = min(start + self.batch_size, count)
            if isinstance(images, torch.Tensor):
                a = b = images[start:stop]
            else:
                pictures = [load_image(image) for image in images[start:stop]]
                a = self.inputs(pictures)
                b = a if other is self.model else self.inputs(pictures, other)
            k = self._grams(self.model, a)
            l_ = k if other is self.model else self._grams(other, b)
            pairs = _pairwise_hsic(k, l_)
            xy = pairs if xy is None else xy + pairs
            own_k = hsic1(k, k)
            own_l = own_k if l_ is k else hsic1(l_, l_)
            xx = own_k if xx is None else xx + own_k
            yy = own_l if yy is None else yy + own_l
            if progress:
                progress(done, len(starts))
        cka = xy / (xx[:, None] * yy[None, :]).clamp_min(1e-300).sqrt()
        kinds = lambda m: [s.kind for s in m.spec.blocks(m.module)]  # noqa: E731
        return SimilarityResult(
            self.model.name,
            other.name,
            kinds(self.model),
            kinds(other),
            cka.tolist(),
            sum(min(s + self.batch_size, count) - s for s in starts),
            self.batch_size,
        )


def headline(result: dict) -> str:
    """Fig 10a's numbers in a line: the matrix's size and mean CKA."""
    cka = np.array(result["cka"])
    return f"{cka.shape[0]}x{cka.shape[1]} blocks, mean CKA {cka.mean():.2f}"


def _pairwise_hsic(k: torch.Tensor, l_: torch.Tensor) -> torch.Tensor:
    """(len(k), len(l_)) HSIC_1 of every pair of Gram matrices from two stacks of one minibatch."""
    from ckatorch.hsic import hsic1

    rows = len(k)
    left = k.repeat_interleave(len(l_), dim=0)
    right = l_.repeat(rows, 1, 1)
    return hsic1(left, right).view(rows, len(l_))  # one value per pair of the two stacks
