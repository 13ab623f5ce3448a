"""Turning any input image into an RGB PIL image, safely, with a one-line error for bad input."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

from .errors import ImageError

MAX_PIXELS = 50_000_000
ImageInput = str | Path | bytes | Image.Image | np.ndarray

ImageFile.LOAD_TRUNCATED_IMAGES = False


def _open(src: str | Path | bytes) -> Image.Image:
    if isinstance(src, bytes):
        if not src:
            raise ImageError("the image is empty (0 bytes)")
        stream, name = io.BytesIO(src), "the upload"
    else:
        path = Path(src)
        if not path.is_file():
            raise ImageError(f"{path}: no such file")
        if path.stat().st_size == 0:
            raise ImageError(f"{path.name}: the file is empty (0 bytes)")
        stream, name = path.open("rb"), path.name
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(stream)
    except UnidentifiedImageError:
        raise ImageError(f"{name}: not an image, or a format that cannot be read") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageError(f"{name}: over {MAX_PIXELS // 1_000_000} megapixels (a decompression bomb?)") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"{name}: the image data is truncated or corrupt ({exc})") from None
    _check_size(image.size, name)
    try:
        image.seek(0)  # first frame of an animation
        image.load()
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"{name}: the image data is truncated or corrupt ({exc})") from None
    return image


def _check_size(size: tuple[int, int], name: str) -> None:
    width, height = size
    if width == 0 or height == 0:
        raise ImageError(f"{name}: the image has 0 pixels ({width}x{height})")
    if width * height > MAX_PIXELS:
        raise ImageError(
            f"{name}: {width}x{height} is {width * height / 1e6:.0f} megapixels, over the "
            f"{MAX_PIXELS // 1_000_000} megapixel limit"
        )


def _to_8bit(image: Image.Image) -> Image.Image:
    """16-bit and float grayscale to 8-bit, scaled by the mode's range."""
    array = np.asarray(image, dtype=np.float64)
    if image.mode.startswith("I;16") or (image.mode == "I" and array.max(initial=0) > 255):
        array = array / 65535.0 * 255.0
    elif image.mode == "F":
        lo, hi = float(array.min(initial=0)), float(array.max(initial=1))
        array = (array - lo) / (hi - lo if hi > lo else 1.0) * 255.0
    return Image.fromarray(np.clip(np.rint(array), 0, 255).astype(np.uint8), mode="L")


def to_rgb(image: Image.Image) -> Image.Image:
    """RGB with EXIF orientation applied and transparency composited on white."""
    image = ImageOps.exif_transpose(image)
    if image.mode in ("I", "I;16", "I;16B", "I;16L", "I;16N", "F"):
        image = _to_8bit(image)
    if image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    if image.mode in ("LA", "La", "PA") or (image.mode == "L" and "transparency" in image.info):
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "RGBa"):
        white = Image.new("RGBA", image.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, image.convert("RGBA"))
    return image.convert("RGB")


def load_image(src: ImageInput) -> Image.Image:
    """Any supported input (path, bytes, PIL image, HxW or HxWxC uint8 array) as an RGB image."""
    if isinstance(src, np.ndarray):
        if src.size == 0:
            raise ImageError("the image array is empty")
        try:
            src = Image.fromarray(src)
        except TypeError as exc:
            raise ImageError(f"the array cannot be read as an image: {exc}") from None
    if isinstance(src, Image.Image):
        _check_size(src.size, "the image")
        image = src
    else:
        image = _open(src)
    return to_rgb(image)
