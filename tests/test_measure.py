"""Analytic checks of the measurements, and every model's block split."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine.analyses.measure import fourier_curve, to_bchw, variance
from engine.models.blocks import BlockSpec


def noise(seed: int = 0) -> torch.Tensor:
    return torch.randn(4, 8, 32, 32, generator=torch.Generator().manual_seed(seed))


def filtered(x: torch.Tensor, kernel: list[list[float]]) -> torch.Tensor:
    k = torch.tensor(kernel, dtype=torch.float32).expand(x.shape[1], 1, len(kernel), len(kernel[0]))
    return F.conv2d(F.pad(x, (0, k.shape[-1] - 1, 0, k.shape[-2] - 1), mode="circular"), k, groups=x.shape[1])


def test_box_blur_lowers_and_laplacian_raises_high_frequencies():
    x = noise()
    base = fourier_curve(x)[-1]
    blurred = fourier_curve(filtered(x, [[0.25, 0.25], [0.25, 0.25]]))[-1]
    sharpened = fourier_curve(filtered(x, [[0, 1, 0], [1, -4, 1], [0, 1, 0]]))[-1]
    assert blurred < base - 1.0  # the 2x2 box blur zeroes the Nyquist diagonal: far lower
    assert sharpened > base + 0.5


def test_white_noise_curve_is_flat_and_starts_at_zero():
    curve = fourier_curve(noise(1))
    assert len(curve) == 16 and curve[0] == 0
    assert torch.all(curve[1:].abs() < 0.7)  # white noise: no frequency stands out


def test_constant_map_has_zero_variance_and_variance_matches_definition():
    assert variance(torch.full((2, 3, 7, 7), 5.0)) == 0
    x = noise(2)
    expected = np.mean([[np.var(x[b, c].numpy(), ddof=1) for c in range(8)] for b in range(4)])
    assert math.isclose(float(variance(x)), expected, rel_tol=1e-5)


def test_token_layouts_fold_to_bchw():
    tokens = torch.arange(2 * 5 * 3, dtype=torch.float32).reshape(2, 5, 3)  # 1 cls + 2x2 grid, 3 channels
    grid = to_bchw(tokens, BlockSpec("t", "msa", torch.nn.Identity(), "bnc", prefix_tokens=1))
    assert grid.shape == (2, 3, 2, 2) and grid[0, 0, 0, 1] == tokens[0, 2, 0]
    hwc = torch.randn(2, 4, 6, 3)
    assert torch.equal(to_bchw(hwc, BlockSpec("s", "mlp", torch.nn.Identity(), "bhwc"))[:, 1], hwc[..., 1])


EXPECTED = {
    "resnet50": (17, {4, 8, 14}, set()),
    "vit_tiny_patch16_224": (25, set(), set(range(1, 25, 2))),
    "vit_small_patch16_224": (25, set(), set(range(1, 25, 2))),
    "deit_small_patch16_224": (25, set(), set(range(1, 25, 2))),
    "swin_tiny_patch4_window7_224": (28, {5, 10, 23}, {1, 3, 6, 8, 11, 13, 15, 17, 19, 21, 24, 26}),
    "pit_ti_224": (27, {5, 18}, {1, 3} | set(range(6, 18, 2)) | set(range(19, 27, 2))),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_model_runs_end_to_end_with_the_paper_block_split(name, photos):
    count, pools, msas = EXPECTED[name]
    model = engine.create_model(name, weights="random", device="cpu")
    result = engine.Analyzer(model).attribute(photos[:2])
    kinds = [b.kind for b in result.blocks]
    assert len(kinds) == count and kinds[0] == "embed"
    assert {i for i, k in enumerate(kinds) if k == "pool"} == pools
    assert {i for i, k in enumerate(kinds) if k == "msa"} == msas
    assert {k for k in kinds[1:]} <= {"conv", "msa", "mlp", "pool"}
    assert result.blocks[-1].normalized_depth == 1.0 and result.blocks[0].normalized_depth == 0.0
    for block in result.blocks:
        assert len(block.shape) == 3 and block.shape[1] == block.shape[2]
        assert len(block.fourier) == block.shape[1] - block.shape[1] // 2
        assert np.isfinite(block.fourier).all() and np.isfinite(block.variance) and block.variance > 0
    assert len(result.predictions) == 2 and all(len(p) == 5 for p in result.predictions)
    assert result.random_weights and result.input_images.shape[1:] == (224, 224, 3)
    if name == "resnet50":
        assert result.attention is None
        assert [b.shape for b in result.blocks if b.kind == "pool"] == [(512, 28, 28), (1024, 14, 14), (2048, 7, 7)]
        return
    assert len(result.attention.layers) == len(msas)
    for layer in result.attention.layers:
        assert layer.maps.shape[0] == 2 and np.isfinite(layer.maps).all()
        assert all(0 < d < 224 * 1.5 for d in layer.mean_distance)
    if name.startswith(("vit", "deit")):
        assert result.attention.rollout.shape == (2, 14, 14)
    if name.startswith("pit"):  # its stages pool the token grid: no rollout through them
        assert result.attention.rollout is None
    if name.startswith("swin"):  # mean attention received within windows: averages to 1/49 per window
        assert result.attention.layers[0].maps.shape[1:] == (3, 56, 56)
        np.testing.assert_allclose(result.attention.layers[0].maps.mean(axis=(2, 3)), 1 / 49, rtol=1e-4)


def test_batches_are_averaged_as_the_paper_does(photos):
    """Per-batch values, then their mean: batch size 1 gives the mean of the per-image values."""
    model = engine.create_model("vit_tiny_patch16_224", weights="random", device="cpu")
    both = engine.Analyzer(model, batch_size=1).attribute(photos[:2])
    single = [engine.Analyzer(model).attribute([p]) for p in photos[:2]]
    for i, block in enumerate(both.blocks):
        np.testing.assert_allclose(block.variance, np.mean([s.blocks[i].variance for s in single]), rtol=1e-5)
        np.testing.assert_allclose(
            block.fourier, np.mean([s.blocks[i].fourier for s in single], axis=0), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("h, w", [(7, 7), (8, 8), (14, 14), (27, 27), (6, 9), (9, 6), (7, 10), (70, 70), (65, 80)])
def test_diagonal_spectrum_equals_the_rolled_full_fft_diagonal(h, w):
    """Through the DFT-matrix product, and past DFT_MAX_PIXELS through the full FFT."""
    from engine.analyses.measure import map_statistics

    def rolled_diagonal(maps: torch.Tensor) -> torch.Tensor:
        rolled = torch.roll(torch.fft.fft2(maps), shifts=(h // 2, w // 2), dims=(-2, -1))
        return torch.diagonal(rolled, dim1=-2, dim2=-1)[..., h // 2 :]

    x = torch.randn(2, 3, h, w, dtype=torch.float64) + 0.5
    stats = map_statistics(x)
    deviations = x - x.mean(dim=(-2, -1), keepdim=True)
    torch.testing.assert_close(torch.complex(*stats.spectrum.chunk(2, dim=-1)), rolled_diagonal(deviations))
    torch.testing.assert_close(stats.amplitudes(), rolled_diagonal(x).abs())


def notebook_curve(x: np.ndarray) -> np.ndarray:
    """MEASUREMENTS.md section 3 in float64 numpy, for a square (B, C, N, N) latent."""
    amplitude = np.fft.fftshift(np.log(np.abs(np.fft.fft2(x.astype(np.float64))) + 1e-6), axes=(-2, -1)).mean(
        axis=(0, 1)
    )
    n = amplitude.shape[0]
    curve = np.array([amplitude[i, i] for i in range(n // 2, n)])
    return curve - curve[0]


@pytest.mark.parametrize("side", [32, 70])  # the DFT-matrix product, and the full FFT past DFT_MAX_PIXELS
@pytest.mark.parametrize("offset", [0.0, 10.0, 1000.0])
def test_float32_curves_stay_exact_on_smooth_maps_with_a_large_offset(offset, side):
    """Smooth maps (tiny high-frequency amplitude) far from zero, as trained transformers' outlier
    channels are: a float32 FFT of the raw map is off by 6e-3 (32x32) and 0.8 (70x70) at offset 1000."""
    x = filtered(torch.randn(4, 8, side, side, generator=torch.Generator().manual_seed(3)), [[1 / 9] * 3] * 3) + offset
    channels_last = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # token latents come like this
    expected = notebook_curve(x.numpy())
    for latent in (x, channels_last):
        np.testing.assert_allclose(fourier_curve(latent).numpy(), expected, rtol=0, atol=1e-4)
        np.testing.assert_allclose(float(variance(latent)), x.double().var(dim=(-2, -1)).mean().item(), rtol=1e-6)


@pytest.mark.parametrize("name", ["alternet", "preact_resnet", "vit_cifar"])
def test_cifar_models_are_measured_on_the_32x32_crop(name, photos):
    model = engine.create_model(name, weights="random", device="cpu", **({} if name == "vit_cifar" else {"width": 8}))
    result = engine.Analyzer(model).attribute(photos[:1])
    assert result.input_images.shape == (1, 32, 32, 3) and result.dataset == "cifar10"
    assert all(np.isfinite(b.fourier).all() and np.isfinite(b.variance) for b in result.blocks)
    msa = [b.index for b in result.blocks if b.kind == "msa"]
    if name == "preact_resnet":
        assert msa == [] and result.attention is None
        return
    assert [layer.block_index for layer in result.attention.layers] == msa
    for layer in result.attention.layers:
        side = result.blocks[layer.block_index].shape[-1]
        assert layer.maps.shape[-2:] == (side, side) and np.isfinite(layer.mean_distance).all()
