"""Any input becomes a correct RGB image; bad input gets a one-line ImageError naming the problem."""

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from engine import ImageError, load_image


def png_bytes(image: Image.Image, **kw) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG", **kw)
    return buf.getvalue()


def with_size(png: bytes, width: int, height: int) -> bytes:
    """The same PNG with its IHDR claiming another size (and a valid CRC): a header-only bomb."""
    ihdr = png[12:29]
    body = ihdr[:4] + struct.pack(">II", width, height) + ihdr[12:]
    return png[:12] + body + struct.pack(">I", zlib.crc32(body)) + png[33:]


def test_exif_orientation_is_applied():
    image = Image.new("RGB", (40, 20), "red")
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise on display
    buf = io.BytesIO()
    image.save(buf, format="JPEG", exif=exif)
    assert load_image(buf.getvalue()).size == (20, 40)


def test_alpha_is_composited_on_white():
    rgba = Image.new("RGBA", (8, 8), (255, 0, 0, 0))
    assert load_image(png_bytes(rgba)).getpixel((0, 0)) == (255, 255, 255)
    half = Image.new("LA", (8, 8), (0, 128))
    assert load_image(half).getpixel((0, 0)) == (127, 127, 127)


def test_palette_grayscale_cmyk_16bit_and_animation():
    palette = Image.new("P", (4, 4), 1)
    palette.putpalette([0, 0, 0, 0, 255, 0] + [0] * 762)
    assert load_image(png_bytes(palette)).getpixel((0, 0)) == (0, 255, 0)
    assert load_image(Image.new("L", (4, 4), 77)).getpixel((1, 1)) == (77, 77, 77)
    cmyk = Image.new("CMYK", (4, 4), (0, 255, 255, 0))
    buf = io.BytesIO()
    cmyk.save(buf, format="JPEG", quality=100)
    r, g, b = load_image(buf.getvalue()).getpixel((1, 1))
    assert r > 200 and g < 60 and b < 60
    deep = Image.fromarray(np.full((4, 4), 65535, dtype=np.uint16))
    assert load_image(png_bytes(deep)).getpixel((0, 0)) == (255, 255, 255)
    frames = [Image.new("RGB", (6, 6), c) for c in ("blue", "yellow")]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:])
    assert load_image(buf.getvalue()).getpixel((0, 0)) == (0, 0, 255)


def test_arrays_and_paths(tmp_path):
    array = np.zeros((5, 7, 3), dtype=np.uint8)
    assert load_image(array).size == (7, 5)
    path = tmp_path / "a.png"
    Image.new("RGB", (3, 3)).save(path)
    assert load_image(path).mode == "RGB" and load_image(str(path)).size == (3, 3)


@pytest.mark.parametrize(
    "data, words",
    [
        (b"", "empty"),
        (b"hello, not an image", "not an image"),
        ("truncated", "truncated"),
        ("huge", "megapixel"),
        ("bomb", "megapixel"),
    ],
)
def test_bad_inputs_name_the_problem(data, words):
    photo = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(photo, "JPEG")
    small = png_bytes(Image.new("RGB", (8, 8)))
    data = {
        "truncated": photo.getvalue()[:600],
        "huge": with_size(small, 8000, 7000),
        "bomb": with_size(small, 100_000, 100_000),
    }.get(data, data)
    with pytest.raises(ImageError) as info:
        load_image(data)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_zero_pixels_and_missing_file(tmp_path):
    with pytest.raises(ImageError, match="0 pixels"):
        load_image(Image.new("RGB", (0, 5)))
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "nope.jpg")
    (tmp_path / "empty.jpg").write_bytes(b"")
    with pytest.raises(ImageError, match="empty"):
        load_image(tmp_path / "empty.jpg")
