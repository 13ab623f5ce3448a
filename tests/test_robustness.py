"""Fig 2b's frequency-based noise against an independent numpy computation on a tiny model."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch

import engine
from engine.analyses.noise import FrequencyNoise, band_mask, band_noise, headline


def numpy_mask(size: int, center: float, width: float) -> np.ndarray:
    """The band of the shifted spectrum, pixel by pixel, in exact fractions: frequencies in units of π
    (numpy's fftfreq, cycles/sample times 2), Chebyshev radius, the half-open window around `center`."""
    freq = [Fraction(round(f * size), size) * 2 for f in np.fft.fftshift(np.fft.fftfreq(size))]
    center, half = Fraction(round(center * 1000), 1000), Fraction(round(width * 1000), 2000)
    mask = np.zeros((size, size))
    for i in range(size):
        for j in range(size):
            mask[i, j] = center - half <= max(abs(freq[i]), abs(freq[j])) < center + half
    return mask


@pytest.mark.parametrize("size", [8, 32])
def test_band_mask_is_the_square_annulus(size):
    for center in np.linspace(0, 1, 11):
        np.testing.assert_array_equal(band_mask(size, float(center)).numpy(), numpy_mask(size, float(center), 0.1))
    assert sum(band_mask(size, float(c)).sum() for c in np.linspace(0, 1, 11)) == size * size  # bands tile it


def test_band_noise_lives_in_its_band_with_the_same_rms():
    noise = band_noise((4, 3, 32, 32), 0.5, 0.1, 0.3, torch.Generator().manual_seed(1)).numpy()
    spectrum = np.abs(np.fft.fftshift(np.fft.fft2(noise), axes=(-2, -1)))
    outside = spectrum * (1 - numpy_mask(32, 0.5, 0.1))
    assert outside.max() < 1e-4 * spectrum.max()
    np.testing.assert_allclose(np.sqrt((noise.reshape(4, -1) ** 2).mean(1)), 0.3, rtol=1e-5)


def test_accuracy_and_agreement_match_a_manual_computation():
    model = engine.create_model(
        "alternet", weights="random", seed=2, device="cpu", width=4, depths=(1, 1, 1, 2), msa="s4:2"
    )
    x = torch.randn(6, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    labels = [0, 1, 2, 3, 4, 5]
    result = FrequencyNoise(model, rms=2.0, bands=3, seed=7).attribute(x, labels)
    assert result.frequencies == [0.0, 0.5, 1.0] and result.images == 6

    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        clean = model.module(x).softmax(-1)
        top1 = clean.argmax(-1)
        for k, f in enumerate([0.0, 0.5, 1.0]):
            delta = torch.randn(x.shape, generator=generator).numpy()
            spectrum = np.fft.fftshift(np.fft.fft2(delta), axes=(-2, -1)) * numpy_mask(32, f, 0.1)
            noise = np.fft.ifft2(np.fft.ifftshift(spectrum, axes=(-2, -1))).real
            noise *= 2.0 / np.sqrt((noise.reshape(6, -1) ** 2).mean(1)).reshape(6, 1, 1, 1)
            noisy = model.module(x + torch.from_numpy(noise).float()).softmax(-1)
            assert result.agreement[k] == pytest.approx(float((noisy.argmax(-1) == top1).float().mean()))
            assert result.accuracy[k] == pytest.approx(float((noisy.argmax(-1) == torch.tensor(labels)).float().mean()))
            assert result.top1_probability[k] == pytest.approx(float(noisy.gather(1, top1[:, None]).mean()), rel=1e-4)
    assert result.accuracy_drop == pytest.approx([result.clean_accuracy - a for a in result.accuracy])


def test_headline_names_the_worst_band_and_the_highest_frequency():
    result = {"frequencies": [0.0, 0.5, 1.0], "clean_accuracy": 0.9, "accuracy_drop": [0.05, 0.4, 0.25]}
    assert headline(result) == "clean accuracy 90.0%, largest drop 40.0 points at 0.5π, 25.0 at 1.0π"
    unlabelled = {**result, "clean_accuracy": None, "accuracy_drop": None, "probability_drop": [0.3, 0.1, 0.2]}
    assert headline(unlabelled) == "largest drop 30.0 points at 0.0π, 20.0 at 1.0π"
