"""Turning any input image into an RGB PIL image, safely, with a one-line error for bad input.

picture = load_image("photo.jpg")                                   # full size
picture = load_image(upload, budget=PixelBudget(100e6), shorter_side=1024)   # a server's way: bounded
"""

from __future__ import annotations

import io
import threading
import time
import warnings
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Iterator

import numpy as np
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

from ..errors import ImageError

MAX_PIXELS = 50_000_000
ImageInput = str | Path | bytes | Image.Image | np.ndarray

ImageFile.LOAD_TRUNCATED_IMAGES = False


class PixelBudget:
    """Pixels being decoded at once, over every thread: a decode waits up to `wait_s` for room, then is refused
    (an image larger than the whole budget takes all of it)."""

    def __init__(self, pixels: float, wait_s: float = 30.0) -> None:
        self.limit, self.wait_s = int(pixels), wait_s
        self.held = 0
        self._room = threading.Condition()

    @contextmanager
    def hold(self, pixels: int, name: str) -> Iterator[None]:
        pixels = min(pixels, self.limit)
        deadline = time.monotonic() + self.wait_s
        with self._room:
            while self.held + pixels > self.limit:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ImageError(f"{name}: the server is decoding other photos just now; try again in a minute")
                self._room.wait(left)
            self.held += pixels
        try:
            yield
        finally:
            with self._room:
                self.held -= pixels
                self._room.notify_all()


def _open(
    src: str | Path | bytes, budget: PixelBudget | None = None, shorter_side: int | None = None, name: str = ""
) -> Image.Image:
    if isinstance(src, bytes):
        name = name or "the upload"
        if not src:
            raise ImageError(f"{name}: the image is empty (0 bytes)")
        stream = io.BytesIO(src)
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
    if shorter_side and image.format == "JPEG":  # decoded at the smallest DCT scale keeping this shorter side
        image.draft("RGB", (shorter_side, shorter_side))
    with budget.hold(image.width * image.height, name) if budget else nullcontext():
        try:
            image.seek(0)  # first frame of an animation
            image.load()
        except (OSError, SyntaxError, ValueError) as exc:
            raise ImageError(f"{name}: the image data is truncated or corrupt ({exc})") from None
        return to_rgb(image)


def _check_size(size: tuple[int, int], name: str) -> None:
    width, height = size
    if width == 0 or height == 0:
        raise ImageError(f"{name}: the image has 0 pixels ({width}x{height})")
    if width * height > MAX_PIXELS:
        raise ImageError(
            f"{name}: {width}x{height} is {width * height:,} pixels, over the limit of {MAX_PIXELS:,} "
            f"({MAX_PIXELS // 1_000_000} megapixels)"
        )


def _to_8bit(image: Image.Image) -> Image.Image:
    """16-bit, 32-bit integer and float grayscale to 8-bit, scaled by the mode's range (float32, in place: a
    50-megapixel image takes 200 MB on the way, not 400)."""
    array = np.array(image, dtype=np.float32)
    if image.mode.startswith("I;16") or (image.mode == "I" and array.max(initial=0) > 255):
        array *= 255.0 / 65535.0
    elif image.mode == "F":
        lo, hi = float(array.min(initial=0)), float(array.max(initial=1))
        array -= lo
        array *= 255.0 / (hi - lo if hi > lo else 1.0)
    np.rint(array, out=array)
    np.clip(array, 0, 255, out=array)
    return Image.fromarray(array.astype(np.uint8), mode="L")


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


def load_image(
    src: ImageInput, budget: PixelBudget | None = None, shorter_side: int | None = None, name: str = ""
) -> Image.Image:
    """Any supported input (path, bytes, PIL image, HxW or HxWxC uint8 array) as an RGB image. A file or bytes is
    decoded within `budget` when given, and a JPEG at the smallest scale (1/2, 1/4, 1/8) that keeps its shorter
    side at least `shorter_side` (JPEG's own reduced decoding: a 12-megapixel photo is decoded at 3). Bytes are
    named `name` in messages ("the upload" if none)."""
    if isinstance(src, np.ndarray):
        if src.size == 0:
            raise ImageError("the image array is empty")
        try:
            src = Image.fromarray(src)
        except TypeError as exc:
            raise ImageError(f"the array cannot be read as an image: {exc}") from None
    if isinstance(src, Image.Image):
        _check_size(src.size, "the image")
        return to_rgb(src)
    return _open(src, budget, shorter_side, name)
