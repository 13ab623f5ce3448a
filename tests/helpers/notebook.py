"""The paper's notebooks' curves, in numpy: the independent computation the engine's curves are checked against."""

from __future__ import annotations

import numpy as np


def notebook_fourier(latent: np.ndarray) -> np.ndarray:
    """fourier_analysis.ipynb, in numpy: log amplitude, fftshift, mean over B and C, half-diagonal."""
    amplitude = np.log(np.abs(np.fft.fft2(latent.astype(np.float64))) + 1e-6)
    mean_map = np.fft.fftshift(amplitude, axes=(-2, -1)).mean(axis=(0, 1))
    n = mean_map.shape[0]
    curve = np.array([mean_map[i, i] for i in range(n // 2, n)])
    return curve - curve[0]


def notebook_variance(latent: np.ndarray) -> float:
    return float(latent.astype(np.float64).var(axis=(-2, -1), ddof=1).mean())
