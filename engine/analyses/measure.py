"""The paper's measurements of one latent (MEASUREMENTS.md sections 2 to 4)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import torch

from ..models.blocks import BlockSpec


def to_bchw(latent: torch.Tensor | tuple, spec: BlockSpec) -> torch.Tensor:
    """Bring a latent to (B, C, H, W): drop prefix tokens and fold token grids; permute channels-last.

    MobileViT's transformers run on unfolded patches, (B * P, N, C) tokens ("bnc") or (B, C, P, N)
    ("bcpn"): each of the P pixel positions of a patch gives one map over the patch grid.
    """
    if spec.layout == "tuple_bchw":
        return latent[0]
    if spec.layout == "bhwc":
        return latent.permute(0, 3, 1, 2)
    if spec.layout == "bnc":
        return _grid(latent[:, spec.prefix_tokens :].transpose(1, 2), spec)
    if spec.layout == "bcpn":
        b, c, p, n = latent.shape
        return _grid(latent.transpose(1, 2).reshape(b * p, c, n), spec)
    return latent


def _grid(tokens: torch.Tensor, spec: BlockSpec) -> torch.Tensor:
    """(B, C, N) tokens of a square grid as (B, C, sqrt(N), sqrt(N))."""
    b, c, n = tokens.shape
    side = math.isqrt(n)
    if side * side != n:
        raise ValueError(f"{spec.name}: {n} tokens do not form a square grid")
    return tokens.reshape(b, c, side, side)


@dataclass
class MapStatistics:
    """What Figs 2a, 8 and 9 need of a (B, C, H, W) latent: per channel map its mean, the 2-D FFT
    of its deviations from the mean at the rolled half-diagonal's frequencies, and the sum of the
    squared deviations. Statistics of several latents of one shape stack along new leading
    dimensions."""

    means: torch.Tensor  # (..., B, C)
    spectrum: torch.Tensor  # (..., B, C, 2J): real, then imaginary parts of the deviations' FFT2
    squares: torch.Tensor  # (..., B, C)
    shape: tuple[int, int]  # (H, W)

    def amplitudes(self) -> torch.Tensor:
        """(..., B, C, J): |FFT2| of each map on the half-diagonal. The deviations' spectrum is the
        map's at every frequency but (0, 0), where the map's is its sum; the diagonal starts there
        when H//2 == W//2."""
        real, imaginary = self.spectrum.chunk(2, dim=-1)
        amplitudes = torch.hypot(real, imaginary)
        h, w = self.shape
        if h // 2 == w // 2:
            amplitudes[..., 0] = self.means.abs() * (h * w)
        return amplitudes

    def log_amplitudes(self) -> torch.Tensor:
        """(..., B, J): per image, log(|FFT2| + 1e-6) on the half-diagonal averaged over channels."""
        return torch.log(self.amplitudes() + 1e-6).mean(dim=-2)

    def variances(self) -> torch.Tensor:
        """(..., B): per image, the unbiased variance of each channel map averaged over channels."""
        h, w = self.shape
        return (self.squares / (h * w - 1)).mean(dim=-1)

    @staticmethod
    def stack(parts: list[MapStatistics]) -> MapStatistics:
        means, spectra, squares = (torch.stack(t) for t in zip(*((p.means, p.spectrum, p.squares) for p in parts)))
        return MapStatistics(means, spectra, squares, parts[0].shape)


DFT_MAX_PIXELS = 64 * 64  # larger maps take the full FFT: the product's cost grows as (H*W)^1.5


def map_statistics(x: torch.Tensor) -> MapStatistics:
    """Read a (B, C, H, W) latent in the layout it comes in (token latents are channels-last),
    float32 or float64 if given: each map's mean, the deviations from it, their product with the
    half-diagonal's DFT matrix (or, past DFT_MAX_PIXELS, their full FFT), then the deviations
    squared in place and summed.

    Taking the mean out first keeps float32 sums accurate on maps with a large offset. The
    two-pass variance is torch.var's value, several times faster on the CPU.
    """
    if x.dtype not in (torch.float32, torch.float64):
        x = x.float()
    h, w = x.shape[-2:]
    maps = x.flatten(-2)
    means = maps.mean(dim=-1, keepdim=True)
    deviations = maps - means  # keeps the latent's layout
    if h * w > DFT_MAX_PIXELS:
        rows, columns = _diagonal_frequencies(h, w, x.device)
        picked = torch.fft.fft2(deviations.unflatten(-1, (h, w)))[..., rows, columns]
        spectrum = torch.cat([picked.real, picked.imag], dim=-1)
    elif deviations.stride(-2) == 1 and deviations.shape[-2] > 1:  # channels-last: (B, H*W, C) underneath
        spectrum = (_diagonal_dft(h, w, x.device, x.dtype) @ deviations.mT).mT
    else:
        spectrum = deviations @ _diagonal_dft(h, w, x.device, x.dtype).mT
    return MapStatistics(means[..., 0], spectrum, deviations.square_().sum(dim=-1), (h, w))


@lru_cache(maxsize=32)
def _diagonal_frequencies(h: int, w: int, device: torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The frequencies the rolled map's main diagonal holds from index H//2 on: rolling by
    (H//2, W//2) puts frequency (t, (t + H//2 - W//2) mod W) at diagonal index H//2 + t, for
    t < J = min(H, W) - H//2 (for square maps, (t, t)). Kept per device: indexing a GPU tensor
    with CPU indices copies them to the GPU, and waits, every time."""
    t = torch.arange(min(h, w) - h // 2, device=device)
    return t, (t + h // 2 - w // 2) % w


@lru_cache(maxsize=32)
def _diagonal_dft(h: int, w: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """(2J, H*W) matrix: times a flattened map it gives FFT2 at `_diagonal_frequencies`, real
    parts then imaginary parts. FFT2 at (t, k) is the sum over (m, n) of x[m, n]
    e^(-2πi (t m / H + k n / W)); the phases are reduced mod H*W in integers, so every entry is
    exact to rounding."""
    t, k = _diagonal_frequencies(h, w)
    m, n = torch.arange(h)[:, None, None], torch.arange(w)[None, :, None]
    phase = (t * m * w + k * n * h) % (h * w)
    angle = -2 * math.pi * phase.double() / (h * w)
    return torch.cat([angle.cos(), angle.sin()], dim=-1).reshape(h * w, -1).T.to(device, dtype).contiguous()


def fourier_curve(x: torch.Tensor) -> torch.Tensor:
    """Δ log amplitude along the half-diagonal of the centered spectrum of a (B, C, H, W) latent.

    log(|FFT2(x)| + 1e-6), rolled so frequency 0 is centered, mean over batch and channels,
    main diagonal from floor(H/2) to the end, minus its first (zero-frequency) value.
    """
    curve = map_statistics(x).log_amplitudes().mean(dim=0)
    return curve - curve[0]


def variance(x: torch.Tensor) -> torch.Tensor:
    """Feature-map variance of a (B, C, H, W) latent: unbiased variance over (H, W) of each channel
    map, mean over B and C."""
    return map_statistics(x).variances().mean()
