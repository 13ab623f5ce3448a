"""The paper's measurements of one latent (MEASUREMENTS.md sections 2 to 4)."""
from __future__ import annotations

import math

import torch

from .blocks import BlockSpec


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


def fourier_curve(x: torch.Tensor) -> torch.Tensor:
    """Δ log amplitude along the half-diagonal of the centered spectrum, averaged over B and C.

    log(|FFT2(x)| + 1e-6), rolled so frequency 0 is centered, mean over batch and channels,
    main diagonal from floor(H/2) to the end, minus its first (zero-frequency) value.
    `x` is (B, C, H, W), or (..., B, C, H, W) for several latents of one shape at once.
    """
    x = x.float()
    h, w = x.shape[-2:]
    if h != w:
        amplitude = torch.log(torch.fft.fft2(x).abs() + 1e-6).mean(dim=(-4, -3))
        mean_map = torch.roll(amplitude, shifts=(h // 2, w // 2), dims=(-2, -1))
        curve = torch.diagonal(mean_map, dim1=-2, dim2=-1)[..., h // 2 :]
    else:
        curve = torch.log(diagonal_spectrum(x).abs() + 1e-6).mean(dim=(-3, -2))
    return curve - curve[..., :1]


def diagonal_spectrum(x: torch.Tensor) -> torch.Tensor:
    """FFT2(x)[..., j, j] for j = 0 .. N - 1 - N//2 of square (..., N, N) maps, without the full FFT2.

    These are the entries the rolled half-diagonal reads. F[j, j] = sum over s of y[s] e^(-2πi js/N)
    with y[s] the sum of x[m, n] over m + n = s (mod N): one 1-D FFT of wrapped anti-diagonal sums.
    """
    n = x.shape[-1]
    m = torch.arange(n, device=x.device)
    columns = (m[None, :] - m[:, None]) % n  # row m, slot s -> column (s - m) mod N
    wrapped = torch.gather(x, -1, columns.expand(*x.shape[:-2], n, n)).sum(dim=-2)
    return torch.fft.fft(wrapped)[..., : n - n // 2]


def variance(x: torch.Tensor) -> torch.Tensor:
    """Feature-map variance: unbiased variance over (H, W) of each channel map, mean over B and C.

    `x` is (B, C, H, W) or (..., B, C, H, W). Two-pass (mean, then the norm of the deviations, which
    squares and sums in one pass without a squared copy): the value of torch.var, several times
    faster on the CPU.
    """
    maps = x.float().flatten(-2)
    deviations = maps - maps.mean(dim=-1, keepdim=True)
    squares = torch.linalg.vector_norm(deviations, dim=-1).square()  # one pass, no squared copy
    return (squares / (maps.shape[-1] - 1)).mean(dim=(-2, -1))
