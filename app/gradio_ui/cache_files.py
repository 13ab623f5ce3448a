"""Images Gradio serves, written whole. Gradio saves an image it sends to a page under a folder named for its
content, with a plain write (`processing_utils.save_pil_to_cache`, Gradio 6.31): when two visitors' maps are the same
image (a class on one sample photo), both write that file at once, and a page reading it meanwhile gets it cut
short (uvicorn: "Too little data for declared Content-Length"; seen in bench/classroom.py). Gradio already writes
other files under a temporary name and renames them into place (`save_file_to_cache`); `write_images_whole` does
the same for images."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gradio import processing_utils
from PIL import Image


def save_pil_to_cache(img: Image.Image, cache_dir: str, name: str = "image", format: str = "webp") -> str:
    """`processing_utils.save_pil_to_cache`, but the file appears whole or not at all."""
    data = processing_utils.encode_pil_to_bytes(img, format)
    folder = Path(cache_dir) / processing_utils.hash_bytes(data)
    folder.mkdir(exist_ok=True, parents=True)
    path = (folder / f"{name}.{format}").resolve()
    try:  # the same content (the folder is its hash), written whole before: Gradio's delete_cache ages files by
        os.utime(path)  # their time, so a copy handed out again is kept
        return str(path)
    except FileNotFoundError:  # not written yet, or deleted since (by delete_cache, between a check and its use)
        pass
    descriptor, staging = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)
    os.replace(staging, path)
    return str(path)


def write_images_whole() -> None:
    """Make every Gradio component that sends an image write it whole (see the module's docstring)."""
    processing_utils.save_pil_to_cache = save_pil_to_cache
