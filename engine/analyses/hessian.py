"""Hessian max-eigenvalue spectra (paper Figs 1c, 4, 12c and C.5; MEASUREMENTS.md section 7).

    result = HessianSpectrum(model).attribute(images, labels)   # top-5 eigenvalues per minibatch of 16

Per minibatch (shuffled and augmented as in training, seeded: random crop with 4 pixels of black
padding, horizontal flip) the loss is NLL (cross-entropy, no label smoothing) + L2, L2 = weight_decay / 2
* the sum of the squares of every trainable parameter, weight_decay 5e-4 by default (L2 adds weight_decay
to every eigenvalue; like the paper, this stands in for the decoupled weight decay of training).
The top-k eigenvalues of its Hessian with respect to all trainable parameters, largest magnitude first
and signed, come from power iteration on Hessian-vector products (double backward), each new
eigenvector orthogonalized against those already found, as PyHessian's `hessian.eigenvalues(top_n=k)`
(Yao et al., 2020), the paper's tool, does, with its stopping rule. As in PyHessian the model is in eval
mode: BN uses its running statistics, dropout and drop path are off. Attention runs on the math SDPA
backend, whose double backward exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..data.training_data import crop_flip
from ..errors import EngineError
from ..models.registry import LoadedModel
from .base import Images, Labels, ModelAnalysis, Progress

Batch = tuple[torch.Tensor, torch.Tensor]


def l2_term(parameters: Iterable[torch.Tensor], weight_decay: float) -> torch.Tensor:
    """The L2 of NLL + L2: weight_decay / 2 * the sum of the squares of `parameters`."""
    return weight_decay / 2 * sum(p.pow(2).sum() for p in parameters)


def black(model: LoadedModel, size: int) -> torch.Tensor:
    """(C, 1, 1): a black pixel after the model's eval transform, the value the crop's padding adds."""
    return model.transform(Image.new("RGB", (size, size)))[:, :1, :1]


def augment(x: torch.Tensor, fill: torch.Tensor, generator: torch.Generator, pad: int = 4) -> torch.Tensor:
    """Training's augmentation (engine.data.training_data.crop_flip) on a preprocessed batch, padding with `fill`."""
    return crop_flip(x - fill, generator, pad) + fill


def _orthonormalize(v: torch.Tensor, basis: list[torch.Tensor]) -> torch.Tensor:
    for u in basis:
        v = v - (v @ u) * u
    return v / v.norm()


@dataclass
class HessianResult:
    """Per minibatch the top-k Hessian eigenvalues of NLL + L2, largest magnitude first, signed."""

    eigenvalues: list[list[float]]
    iterations: list[list[int]]  # power iterations each eigenvalue took (max_iter: not converged)
    loss: list[float]  # NLL + L2 per minibatch
    nll: list[float]
    batch_size: int
    top_k: int
    weight_decay: float
    parameters: int
    augmented: bool

    @property
    def values(self) -> list[float]:
        """Every eigenvalue of every minibatch: the samples of Fig 4's spectrum."""
        return [value for batch in self.eigenvalues for value in batch]

    @property
    def nep(self) -> float:
        """Negative max eigenvalue proportion (Fig C.5): the share of the eigenvalues below zero."""
        return float(np.mean(np.array(self.values) < 0))

    @property
    def ape(self) -> float | None:
        """Average of the positive max eigenvalues (Fig C.5); None when there are none."""
        positive = [v for v in self.values if v > 0]
        return float(np.mean(positive)) if positive else None

    def histogram(self, bins: int = 30) -> dict:
        """Fig 4's two panels: densities of the positive eigenvalues and of the magnitudes of the negative
        ones over shared log-spaced bins, per decade and as shares of all eigenvalues (so the negative
        panel integrates to NEP, over log10 |eigenvalue|)."""
        values = np.array(self.values)
        magnitudes = np.abs(values[values != 0])
        if not len(magnitudes):
            return {"edges": [], "positive": [], "negative": []}
        low, high = magnitudes.min(), magnitudes.max()
        if high <= low:
            low, high = low / 10**0.5, high * 10**0.5
        edges = np.geomspace(low, high, bins + 1)
        scale = len(values) * np.diff(np.log10(edges))
        positive = np.histogram(values[values > 0], edges)[0] / scale
        negative = np.histogram(-values[values < 0], edges)[0] / scale
        return {"edges": edges.tolist(), "positive": positive.tolist(), "negative": negative.tolist()}

    def to_json(self) -> dict:
        return {
            "eigenvalues": self.eigenvalues,
            "iterations": self.iterations,
            "loss": self.loss,
            "nll": self.nll,
            "nep": self.nep,
            "ape": self.ape,
            "histogram": self.histogram(),
            "batch_size": self.batch_size,
            "top_k": self.top_k,
            "weight_decay": self.weight_decay,
            "parameters": self.parameters,
            "augmented": self.augmented,
        }


class HessianSpectrum(ModelAnalysis):
    """Figs 1c and 4: the top-k Hessian eigenvalues of NLL + L2 on minibatches, by power iteration."""

    def __init__(
        self,
        model: LoadedModel,
        top_k: int = 5,
        batch_size: int = 16,
        batches: int | None = None,
        max_iter: int = 100,
        tol: float = 1e-3,
        weight_decay: float = 5e-4,
        augmented: bool = True,
        seed: int = 0,
    ) -> None:
        """`batches` minibatches of `batch_size` shuffled images (None: as many as the images fill); power
        iteration stops when the eigenvalue's relative change is below `tol`, or after `max_iter` steps."""
        if top_k < 1 or max_iter < 1:
            raise EngineError(f"top_k and max_iter must be at least 1, not {top_k} and {max_iter}")
        super().__init__(model, batch_size)
        self.top_k, self.batches = top_k, batches
        self.max_iter, self.tol, self.weight_decay, self.augmented, self.seed = (
            max_iter,
            tol,
            weight_decay,
            augmented,
            seed,
        )

    def minibatches(self, x: torch.Tensor, labels: Labels) -> list[Batch]:
        """The seeded shuffled (and augmented) minibatches of a preprocessed batch that are measured."""
        count = len(x) // self.batch_size if self.batches is None else self.batches
        if count < 1 or count * self.batch_size > len(x):
            raise EngineError(f"{len(x)} images do not fill {max(count, 1)} minibatches of {self.batch_size}")
        y = self.targets(labels, len(x))
        generator = torch.Generator().manual_seed(self.seed)
        order = torch.randperm(len(x), generator=generator)
        fill = black(self.model, x.shape[-1]).to(x) if self.augmented else None
        batches = []
        for start in range(0, count * self.batch_size, self.batch_size):
            index = order[start : start + self.batch_size]
            images = augment(x[index], fill, generator) if self.augmented else x[index]
            batches.append((images, y[index]))
        return batches

    def _spectrum(
        self, x: torch.Tensor, y: torch.Tensor, generator: torch.Generator, tick: Callable[[], None]
    ) -> tuple[list[float], list[int], float, float]:
        """Top-k eigenvalues, the iterations they took, NLL + L2 and NLL of one minibatch."""
        params = [p for p in self.model.module.parameters() if p.requires_grad]
        dtype, device = params[0].dtype, self.model.device
        with sdpa_kernel(SDPBackend.MATH):
            nll = F.cross_entropy(self.forward(x.to(dtype)), y.to(device))
        loss = nll + l2_term(params, self.weight_decay)
        grads = torch.autograd.grad(loss, params, create_graph=True, allow_unused=True, materialize_grads=True)
        gradient = torch.cat([g.reshape(-1) for g in grads])

        def hvp(v: torch.Tensor) -> torch.Tensor:
            hv = torch.autograd.grad(gradient, params, v, retain_graph=True, allow_unused=True, materialize_grads=True)
            return torch.cat([h.reshape(-1) for h in hv])

        values, iterations, vectors = [], [], []
        for _ in range(self.top_k):
            v = torch.randn(len(gradient), generator=generator, dtype=dtype).to(device)
            v, value = v / v.norm(), None
            for step in range(1, self.max_iter + 1):
                v = _orthonormalize(v, vectors)
                hv = hvp(v)
                new = float(hv @ v)
                v = hv / hv.norm()
                done = value is not None and abs(new - value) / (abs(value) + 1e-6) < self.tol
                value = new
                if done:
                    break
            values.append(value)
            iterations.append(step)
            vectors.append(_orthonormalize(v, vectors))
            tick()
        return values, iterations, float(loss.detach()), float(nll.detach())

    def attribute(
        self, images: Images, labels: Labels | None = None, progress: Progress | None = None
    ) -> HessianResult:
        """The spectrum over `images` (files/PIL/arrays, or a preprocessed batch) and their labels;
        `progress(done, total)` after each eigenvalue."""
        batches = self.minibatches(self.inputs(images), labels)
        generator = torch.Generator().manual_seed(self.seed)
        total, done = len(batches) * self.top_k, 0

        def tick() -> None:
            nonlocal done
            done += 1
            if progress:
                progress(done, total)

        module = self.model.module
        training = module.training
        module.eval()
        try:
            spectra = [self._spectrum(x, y, generator, tick) for x, y in batches]
        finally:
            module.train(training)
        values, iterations, loss, nll = (list(column) for column in zip(*spectra))
        parameters = sum(p.numel() for p in module.parameters() if p.requires_grad)
        return HessianResult(
            values, iterations, loss, nll, self.batch_size, self.top_k, self.weight_decay, parameters, self.augmented
        )


def headline(result: dict) -> str:
    """Figs 1c and 4's numbers in a line: the mean top eigenvalue and the share of negative ones."""
    top = np.array(result["eigenvalues"])[:, 0]
    return f"top eigenvalue {top.mean():.3g} on average over {len(top)} minibatches, NEP {100 * result['nep']:.0f}%"
