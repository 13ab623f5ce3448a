"""Robustness against common corruptions (paper Fig 12b: accuracy on CIFAR-C against clean accuracy).

    result = CorruptionRobustness(model).attribute(images, labels)   # accuracy per corruption and severity

The corruptions of CIFAR-10-C (Hendrycks & Dietterich, ICLR 2019) with the CIFAR severity parameters of
Hendrycks' make_cifar_c.py (not ImageNet-C's), rewritten on numpy, scipy and PIL with a seeded
`np.random.Generator`, so the same seed gives the same corrupted images. Each corruption maps a uint8
(H, W, 3) image and a severity 1..5 to a uint8 image; the parameters are meant for 32x32 images. As in
the reference, results in [0, 1] are scaled by 255 and truncated to uint8. Frost (needs the reference's
frost photographs) and spatter (needs OpenCV's Canny edges and distance transform) are not implemented.
"""

from __future__ import annotations

import io
import math
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np
import torch
from PIL import Image
from scipy import ndimage

from ..errors import EngineError
from ..models.registry import LoadedModel
from .base import Labels, ModelAnalysis, Progress

Corruption = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]
SEVERITIES = (1, 2, 3, 4, 5)


def _unit(image: np.ndarray) -> np.ndarray:
    return image.astype(np.float64) / 255.0


def _to_uint8(x: np.ndarray) -> np.ndarray:
    """[0, 1] floats to uint8, truncated as the reference's np.uint8 cast."""
    return (np.clip(x, 0, 1) * 255).astype(np.uint8)


def _blur(x: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur over the two spatial axes (skimage.filters.gaussian's defaults: nearest edge, 4 sigma)."""
    return ndimage.gaussian_filter(x, (sigma, sigma) + (0,) * (x.ndim - 2), mode="nearest", truncate=4.0)


@lru_cache(maxsize=None)
def _zoom_taps(size: int, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """Linear-interpolation taps (left neighbor, its right neighbor's weight) of a centered zoom along one
    axis: the central ceil(size / factor) pixels stretched end pixel to end pixel over round(crop * factor)
    (as scipy.ndimage.zoom with order 1), of which the central `size` are kept."""
    crop = math.ceil(size / factor)
    zoomed = round(crop * factor)
    coords = (size - crop) // 2 + (np.arange(size) + (zoomed - size) // 2) * (crop - 1) / (zoomed - 1)
    left = np.minimum(np.floor(coords).astype(int), size - 2)
    return left, coords - left


def _clipped_zoom(x: np.ndarray, factor: float) -> np.ndarray:
    """Bilinear zoom by `factor` about the center, cropped back to the input's size."""
    for axis in (0, 1):
        left, weight = _zoom_taps(x.shape[axis], factor)
        weight = weight.reshape((-1,) + (1,) * (x.ndim - 1 - axis))
        x = np.take(x, left, axis) * (1 - weight) + np.take(x, left + 1, axis) * weight
    return x


def _motion_blur(x: np.ndarray, radius: float, sigma: float, angle: float) -> np.ndarray:
    """ImageMagick's MotionBlurImage: a one-sided Gaussian of 2*ceil(radius)+1 taps along `angle`
    (degrees, y down), edge pixels repeated past the border."""
    taps = np.arange(2 * math.ceil(radius) + 1)
    weights = np.exp(-(taps**2) / (2 * sigma**2))
    weights /= weights.sum()
    rows = np.ceil(taps * math.sin(math.radians(angle)) - 0.5).astype(int)
    cols = np.ceil(taps * math.cos(math.radians(angle)) - 0.5).astype(int)
    pad = len(taps)
    padded = np.pad(x.astype(np.float64), [(pad, pad), (pad, pad)] + [(0, 0)] * (x.ndim - 2), mode="edge")
    h, w = x.shape[:2]
    out = np.zeros(x.shape, dtype=np.float64)
    for weight, dy, dx in zip(weights, rows, cols):
        out += weight * padded[pad + dy : pad + dy + h, pad + dx : pad + dx + w]
    return out


def _plasma_fractal(size: int, decay: float, rng: np.random.Generator) -> np.ndarray:
    """A (size, size) diamond-square height map in [0, 1] on a torus; `size` a power of two. The noise
    added at a level is uniform in ±wibble², wibble starting at 100 and divided by `decay` per level."""
    grid = np.zeros((size, size))
    step, wibble = size, 100.0
    while step >= 2:
        half = step // 2
        corners = grid[::step, ::step]
        around = corners + np.roll(corners, -1, 0)
        around = around + np.roll(around, -1, 1)
        grid[half::step, half::step] = around / 4 + rng.uniform(-1, 1, around.shape) * wibble**2
        centers = grid[half::step, half::step]
        # edge midpoints between two corners: those corners and the centers on either side
        around = centers + np.roll(centers, 1, 0) + corners + np.roll(corners, -1, 1)
        grid[::step, half::step] = around / 4 + rng.uniform(-1, 1, around.shape) * wibble**2
        around = centers + np.roll(centers, 1, 1) + corners + np.roll(corners, -1, 0)
        grid[half::step, ::step] = around / 4 + rng.uniform(-1, 1, around.shape) * wibble**2
        step, wibble = half, wibble / decay
    grid -= grid.min()
    return grid / grid.max()


def _affine(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The (2, 3) affine map taking three `source` points to three `target` points."""
    return np.linalg.solve(np.hstack([source, np.ones((3, 1))]), target).T


# ---- the corruptions: (uint8 image, severity 1..5, rng) -> uint8 image ----


def gaussian_noise(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    scale = (0.04, 0.06, 0.08, 0.09, 0.10)[severity - 1]
    return _to_uint8(_unit(image) + rng.normal(0.0, scale, image.shape))


def shot_noise(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    photons = (500, 250, 100, 75, 50)[severity - 1]
    return _to_uint8(rng.poisson(_unit(image) * photons) / photons)


def impulse_noise(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Salt and pepper on a share of the values (each channel apart), half salt, half pepper."""
    amount = (0.01, 0.02, 0.03, 0.05, 0.07)[severity - 1]
    flipped = rng.random(image.shape) < amount
    salt = rng.random(image.shape) < 0.5
    return np.where(flipped, np.where(salt, 255, 0), image).astype(np.uint8)


def speckle_noise(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    scale = (0.06, 0.10, 0.12, 0.16, 0.20)[severity - 1]
    x = _unit(image)
    return _to_uint8(x + x * rng.normal(0.0, scale, image.shape))


def gaussian_blur(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    sigma = (0.4, 0.6, 0.7, 0.8, 1.0)[severity - 1]
    return _to_uint8(_blur(_unit(image), sigma))


def glass_blur(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Blur, then `iterations` times replace each inner pixel by its neighbor at a random offset in
    {-1, 0}², then blur again. The reference's in-place "swap" of numpy row views copies instead of
    swapping, and reads only pixels not yet visited, so each pass is this gather from the pass's input."""
    sigma, iterations = ((0.05, 1), (0.25, 1), (0.4, 1), (0.25, 2), (0.4, 2))[severity - 1]
    x = _to_uint8(_blur(_unit(image), sigma))
    h, w = x.shape[:2]
    rows, cols = np.meshgrid(np.arange(2, h), np.arange(2, w), indexing="ij")
    for _ in range(iterations):
        dy, dx = rng.integers(-1, 1, size=(2, *rows.shape))
        shuffled = x.copy()
        shuffled[rows, cols] = x[rows + dy, cols + dx]
        x = shuffled
    return _to_uint8(_blur(_unit(x), sigma))


def defocus_blur(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Correlation with a disk of `radius` (on a 17x17 grid) smoothed by a 3-tap Gaussian of `alias`."""
    radius, alias = ((0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1.0, 0.2), (1.5, 0.1))[severity - 1]
    grid = np.arange(-8, 9)
    disk = (grid[:, None] ** 2 + grid[None, :] ** 2 <= radius**2).astype(np.float64)
    taps = np.exp(-np.array([1.0, 0.0, 1.0]) / (2 * alias**2))
    taps /= taps.sum()
    kernel = ndimage.correlate1d(ndimage.correlate1d(disk / disk.sum(), taps, axis=0), taps, axis=1)
    return _to_uint8(ndimage.correlate(_unit(image), kernel[:, :, None], mode="mirror"))


def motion_blur(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """ImageMagick's motion blur at a random angle in [-45, 45) degrees, rounded to uint8 as its PNG was."""
    radius, sigma = ((6, 1.0), (6, 1.5), (6, 2.0), (8, 2.0), (9, 2.5))[severity - 1]
    blurred = _motion_blur(image, radius, sigma, rng.uniform(-45, 45))
    return np.clip(np.rint(blurred), 0, 255).astype(np.uint8)


def zoom_blur(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """The mean of the image and its zooms by 1, 1.01, ... (np.arange's float steps include the stop
    at some severities, as in the reference)."""
    stop = (1.06, 1.11, 1.16, 1.21, 1.26)[severity - 1]
    x = _unit(image)
    factors = np.arange(1, stop, 0.01)
    total = x + sum(_clipped_zoom(x, float(f)) for f in factors)
    return _to_uint8(total / (len(factors) + 1))


def snow(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Thresholded zoomed Gaussian flakes, motion blurred downwards, added twice (once rotated by 180
    degrees) onto the image lightened towards 1.5 gray + 0.5."""
    loc, scale, zoom, threshold, radius, sigma, keep = (
        (0.1, 0.2, 1.0, 0.6, 8, 3, 0.95),
        (0.1, 0.2, 1.0, 0.5, 10, 4, 0.9),
        (0.15, 0.3, 1.75, 0.55, 10, 4, 0.9),
        (0.25, 0.3, 2.25, 0.6, 12, 6, 0.85),
        (0.3, 0.3, 1.25, 0.65, 14, 12, 0.8),
    )[severity - 1]
    x = _unit(image)
    flakes = _clipped_zoom(rng.normal(loc, scale, image.shape[:2])[..., None], zoom)[..., 0]
    flakes[flakes < threshold] = 0
    flakes = np.clip(np.rint(_motion_blur(_to_uint8(flakes), radius, sigma, rng.uniform(-135, -45))), 0, 255)
    flakes = (flakes / 255.0)[..., None]
    gray = (x * [0.299, 0.587, 0.114]).sum(-1)
    x = keep * x + (1 - keep) * np.maximum(x, gray[..., None] * 1.5 + 0.5)
    return _to_uint8(x + flakes + np.rot90(flakes, 2))


def fog(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """A plasma fractal of `strength` added to every channel, rescaled by the image's maximum."""
    strength, decay = ((0.2, 3.0), (0.5, 3.0), (0.75, 2.5), (1.0, 2.0), (1.5, 1.75))[severity - 1]
    x = _unit(image)
    h, w = x.shape[:2]
    peak = x.max()
    plasma = _plasma_fractal(1 << (max(h, w, 2) - 1).bit_length(), decay, rng)  # the next power of two
    x = x + strength * plasma[:h, :w, None]
    return _to_uint8(x * peak / (peak + strength))


def brightness(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """HSV value + `shift` (clipped to 1) at the same hue and saturation: each pixel scaled by
    V'/V, and black (hue and saturation 0) becomes the gray V'."""
    shift = (0.05, 0.1, 0.15, 0.2, 0.3)[severity - 1]
    x = _unit(image)
    value = x.max(-1, keepdims=True)
    brighter = np.minimum(value + shift, 1.0)
    return _to_uint8(np.where(value > 0, x * brighter / np.where(value > 0, value, 1.0), brighter))


def contrast(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    factor = (0.75, 0.5, 0.4, 0.3, 0.15)[severity - 1]
    x = _unit(image)
    mean = x.mean(axis=(0, 1), keepdims=True)
    return _to_uint8((x - mean) * factor + mean)


def saturate(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """HSV saturation S' = clip(S * gain + offset) at the same hue and value: V - (V - x) S'/S, and a
    gray pixel (hue 0, red) becomes (V, V(1 - S'), V(1 - S'))."""
    gain, offset = ((0.3, 0.0), (0.1, 0.0), (1.5, 0.0), (2.0, 0.1), (2.5, 0.2))[severity - 1]
    x = _unit(image)
    value = x.max(-1, keepdims=True)
    spread = value - x.min(-1, keepdims=True)
    saturation = np.divide(spread, value, out=np.zeros_like(value), where=value > 0)
    target = np.clip(saturation * gain + offset, 0, 1)
    colored = value - (value - x) * np.divide(target, saturation, out=np.zeros_like(value), where=spread > 0)
    gray = value * np.concatenate([np.ones_like(target), 1 - target, 1 - target], axis=-1)
    return _to_uint8(np.where(spread > 0, colored, gray))


def elastic_transform(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """A random affine warp (three points moved up to `jitter` px, mirrored border), then a smooth
    random displacement field (uniform noise blurred by `smooth`, times `alpha`), both bilinear."""
    h, w = image.shape[:2]
    alpha, smooth, jitter = (
        np.array(
            ((0.0, 0.0, 0.08), (0.05, 0.2, 0.07), (0.08, 0.06, 0.06), (0.1, 0.04, 0.05), (0.1, 0.03, 0.03))[
                severity - 1
            ]
        )
        * h
    )
    x = _unit(image)
    center, half = np.array([h // 2, w // 2], dtype=np.float64), min(h, w) // 3
    points = np.array([center + half, [center[0] + half, center[1] - half], center - half])
    moved = points + rng.uniform(-jitter, jitter, points.shape)
    inverse = _affine(moved, points)  # output (row, col) -> input (row, col)
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    source = np.einsum("ij,jhw->ihw", inverse, np.stack([rows, cols, np.ones_like(rows)]).astype(np.float64))
    x = np.stack([ndimage.map_coordinates(x[..., c], source, order=1, mode="mirror") for c in range(3)], -1)
    dx = ndimage.gaussian_filter(rng.uniform(-1, 1, (h, w)), smooth, mode="reflect", truncate=3.0) * alpha
    dy = ndimage.gaussian_filter(rng.uniform(-1, 1, (h, w)), smooth, mode="reflect", truncate=3.0) * alpha
    x = np.stack(
        [ndimage.map_coordinates(x[..., c], [rows + dy, cols + dx], order=1, mode="reflect") for c in range(3)], -1
    )
    return _to_uint8(x)


def pixelate(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """PIL box downscale to `factor` of the size (truncated), then box upscale back."""
    factor = (0.95, 0.9, 0.85, 0.75, 0.65)[severity - 1]
    h, w = image.shape[:2]
    small = Image.fromarray(image).resize((int(w * factor), int(h * factor)), Image.Resampling.BOX)
    return np.asarray(small.resize((w, h), Image.Resampling.BOX))


def jpeg_compression(image: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    quality = (80, 65, 58, 50, 40)[severity - 1]
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "JPEG", quality=quality)
    return np.asarray(Image.open(buffer).convert("RGB"))


CORRUPTIONS: dict[str, Corruption] = {
    f.__name__: f
    for f in (
        gaussian_noise,
        shot_noise,
        impulse_noise,
        defocus_blur,
        glass_blur,
        motion_blur,
        zoom_blur,
        snow,
        fog,
        brightness,
        contrast,
        elastic_transform,
        pixelate,
        jpeg_compression,
        speckle_noise,
        gaussian_blur,
        saturate,
    )
}
# CIFAR-10-C's 15 benchmark corruptions less frost; speckle_noise, gaussian_blur and saturate are its extras
BENCHMARK = tuple(CORRUPTIONS)[:14]


def corrupt(image: np.ndarray, name: str, severity: int, rng: np.random.Generator) -> np.ndarray:
    """`image` (uint8, H x W x 3) with corruption `name` at `severity` (1..5), random draws from `rng`."""
    if name not in CORRUPTIONS:
        raise EngineError(f"unknown corruption {name!r}; known: {', '.join(CORRUPTIONS)}")
    if severity not in SEVERITIES:
        raise EngineError(f"severity must be 1..5, not {severity!r}")
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise EngineError(f"expected a uint8 (H, W, 3) image, got {image.dtype} {image.shape}")
    return CORRUPTIONS[name](image, severity, rng)


def corruption_rng(seed: int, name: str, severity: int) -> np.random.Generator:
    """The generator for one corruption and severity: the same draws whichever others are run."""
    return np.random.default_rng([seed, zlib.crc32(name.encode()), severity])


@dataclass
class CorruptionResult:
    """Clean accuracy and, per corruption, the accuracy at each severity."""

    corruptions: list[str]
    severities: list[int]
    clean_accuracy: float
    accuracy: dict[str, list[float]]  # corruption -> one accuracy per severity
    images: int

    @property
    def mean_accuracy(self) -> float:
        """Accuracy averaged over all corruptions and severities (Fig 12b's corrupted accuracy)."""
        return float(np.mean([a for row in self.accuracy.values() for a in row]))

    @property
    def accuracy_by_severity(self) -> list[float]:
        """Accuracy at each severity, averaged over corruptions."""
        return [float(np.mean([row[i] for row in self.accuracy.values()])) for i in range(len(self.severities))]

    @property
    def accuracy_by_corruption(self) -> dict[str, float]:
        """Accuracy of each corruption, averaged over severities."""
        return {name: float(np.mean(row)) for name, row in self.accuracy.items()}

    def to_json(self) -> dict:
        return {
            "corruptions": self.corruptions,
            "severities": self.severities,
            "clean_accuracy": self.clean_accuracy,
            "accuracy": self.accuracy,
            "mean_accuracy": self.mean_accuracy,
            "accuracy_by_severity": self.accuracy_by_severity,
            "accuracy_by_corruption": self.accuracy_by_corruption,
            "images": self.images,
        }


class CorruptionRobustness(ModelAnalysis):
    """Fig 12b: a model's accuracy on corrupted copies of labeled images, against its clean accuracy."""

    def __init__(
        self,
        model: LoadedModel,
        corruptions: Sequence[str] = BENCHMARK,
        severities: Sequence[int] = SEVERITIES,
        seed: int = 0,
        batch_size: int = 100,
    ) -> None:
        unknown = [name for name in corruptions if name not in CORRUPTIONS]
        if unknown:
            raise EngineError(f"unknown corruption(s) {', '.join(unknown)}; known: {', '.join(CORRUPTIONS)}")
        if not severities or not set(severities) <= set(SEVERITIES):
            raise EngineError(f"severities must be some of 1..5, not {list(severities)}")
        if not corruptions:
            raise EngineError("no corruption chosen")
        super().__init__(model, batch_size)
        self.seed, self.corruptions, self.severities = seed, list(corruptions), list(severities)

    def _predict(self, images: Sequence[np.ndarray]) -> torch.Tensor:
        return self.logits(self.inputs(images)).argmax(-1)

    def attribute(
        self, images: np.ndarray | Sequence[np.ndarray], labels: Labels | None = None, progress: Progress | None = None
    ) -> CorruptionResult:
        """Accuracy on `images` (uint8, N x H x W x 3; the corruptions work on pixels) as they are and under
        every corruption and severity."""
        images = [np.asarray(image) for image in images]
        truth = self.targets(labels, len(images))
        clean = float((self._predict(images) == truth).float().mean())
        accuracy: dict[str, list[float]] = {name: [] for name in self.corruptions}
        total, done = len(self.corruptions) * len(self.severities), 0
        for name in self.corruptions:
            for severity in self.severities:
                rng = corruption_rng(self.seed, name, severity)
                corrupted = [corrupt(image, name, severity, rng) for image in images]
                accuracy[name].append(float((self._predict(corrupted) == truth).float().mean()))
                done += 1
                if progress:
                    progress(done, total)
        return CorruptionResult(self.corruptions, self.severities, clean, accuracy, len(images))


def headline(result: dict) -> str:
    """Fig 12b's numbers in a line: clean and mean corrupted accuracy."""
    return (
        f"clean accuracy {100 * result['clean_accuracy']:.1f}%, "
        f"corrupted {100 * result['mean_accuracy']:.1f}% on average"
    )
