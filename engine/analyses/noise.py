"""Robustness against frequency-based random noise (paper Fig 2b; MEASUREMENTS.md section 5).

    result = FrequencyNoise(model).attribute(images, labels)   # accuracy drop per frequency band

x_noise = x + real(IFFT(M_f * FFT(delta))): delta is Gaussian noise, M_f keeps the square annulus
f - w/2 <= max(|fy|, |fx|) < f + w/2 of the shifted spectrum (w = 0.1π, frequencies in units of π),
and the filtered noise is rescaled to the same RMS in every band, so only its frequency changes.
The noise is added to the model's input, after its eval transform (normalized pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..models.registry import LoadedModel
from .base import Images, Labels, ModelAnalysis, Progress


def band_mask(size: int, center: float, width: float = 0.1) -> torch.Tensor:
    """(size, size) 0/1 mask of the shifted spectrum: the square annulus center - width/2 <= radius <
    center + width/2 (radius max(|fy|, |fx|) in units of π), edges decided in float64 with a margin so
    that a frequency on an edge always goes to the upper band."""
    offsets = torch.arange(size, dtype=torch.float64) - size // 2
    radius = 2 * torch.maximum(offsets.abs()[:, None], offsets.abs()[None, :]) / size
    band = torch.floor(radius / width + 0.5 + 1e-9)
    return (band == round(center / width)).float()


def band_noise(
    shape: tuple[int, ...], center: float, width: float, rms: float, generator: torch.Generator
) -> torch.Tensor:
    """Gaussian noise of `shape` (..., H, W) kept to one frequency band and scaled to RMS `rms` per image."""
    delta = torch.randn(shape, generator=generator)
    mask = band_mask(shape[-1], center, width)
    spectrum = torch.fft.fftshift(torch.fft.fft2(delta), dim=(-2, -1)) * mask
    noise = torch.fft.ifft2(torch.fft.ifftshift(spectrum, dim=(-2, -1))).real
    norm = noise.flatten(1).pow(2).mean(1).sqrt().clamp_min(1e-12).view(-1, *[1] * (noise.dim() - 1))
    return noise / norm * rms


@dataclass
class NoiseResult:
    """Per band (centers in units of π): accuracy, or without labels the share of unchanged top-1
    predictions, and the mean top-1 probability of the clean prediction."""

    frequencies: list[float]
    clean_accuracy: float | None
    accuracy: list[float] | None  # with labels
    agreement: list[float]  # share of images whose top-1 class stays that of the clean image
    top1_probability: list[float]  # mean probability of the clean top-1 class under noise
    clean_top1_probability: float
    rms: float
    images: int

    @property
    def accuracy_drop(self) -> list[float] | None:
        """Clean accuracy minus noisy accuracy, per band (Fig 2b's y-axis)."""
        if self.accuracy is None or self.clean_accuracy is None:
            return None
        return [self.clean_accuracy - a for a in self.accuracy]

    @property
    def probability_drop(self) -> list[float]:
        """The drop of the clean top-1 class's probability, per band (for one unlabeled photo)."""
        return [self.clean_top1_probability - p for p in self.top1_probability]

    def to_json(self) -> dict:
        return {
            "frequencies": self.frequencies,
            "clean_accuracy": self.clean_accuracy,
            "accuracy": self.accuracy,
            "accuracy_drop": self.accuracy_drop,
            "agreement": self.agreement,
            "top1_probability": self.top1_probability,
            "probability_drop": self.probability_drop,
            "rms": self.rms,
            "images": self.images,
        }


class FrequencyNoise(ModelAnalysis):
    """Fig 2b: how a model's predictions suffer from random noise of one frequency band at a time."""

    def __init__(
        self,
        model: LoadedModel,
        rms: float = 0.5,
        width: float = 0.1,
        bands: int = 11,
        seed: int = 0,
        batch_size: int = 100,
    ) -> None:
        super().__init__(model, batch_size)
        self.rms, self.width, self.seed = rms, width, seed
        self.frequencies = [round(float(f), 4) for f in np.linspace(0, 1, bands)]

    def attribute(self, images: Images, labels: Labels | None = None, progress: Progress | None = None) -> NoiseResult:
        """Clean and noisy predictions for every band; `images` as files/PIL/arrays or a preprocessed batch.
        Without labels (one photo), the result has agreement and probabilities but no accuracy."""
        x = self.inputs(images)
        clean = self.logits(x).softmax(-1)
        top1 = clean.argmax(-1)
        truth = None if labels is None else self.targets(labels, len(x))
        generator = torch.Generator().manual_seed(self.seed)
        accuracy, agreement, probability = [], [], []
        for i, f in enumerate(self.frequencies):
            noisy = self.logits(x + band_noise(tuple(x.shape), f, self.width, self.rms, generator)).softmax(-1)
            predicted = noisy.argmax(-1)
            agreement.append(float((predicted == top1).float().mean()))
            probability.append(float(noisy.gather(1, top1[:, None]).mean()))
            if truth is not None:
                accuracy.append(float((predicted == truth).float().mean()))
            if progress:
                progress(i + 1, len(self.frequencies))
        clean_accuracy = None if truth is None else float((top1 == truth).float().mean())
        return NoiseResult(
            self.frequencies,
            clean_accuracy,
            accuracy if truth is not None else None,
            agreement,
            probability,
            float(clean.gather(1, top1[:, None]).mean()),
            self.rms,
            len(x),
        )


def headline(result: dict) -> str:
    """Fig 2b's numbers in a line: clean accuracy, the band where the noise hurts most and the drop at the
    highest frequency (the paper's claim is about the high end)."""
    drops, frequencies = result["accuracy_drop"] or result["probability_drop"], result["frequencies"]
    worst = int(np.argmax(drops))
    clean = "" if result["clean_accuracy"] is None else f"clean accuracy {100 * result['clean_accuracy']:.1f}%, "
    return (
        f"{clean}largest drop {100 * drops[worst]:.1f} points at {frequencies[worst]:.1f}π, "
        f"{100 * drops[-1]:.1f} at {frequencies[-1]:.1f}π"
    )
