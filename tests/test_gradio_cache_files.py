"""An image Gradio sends is never read half-written, when two visitors' maps are the same image at once."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
from gradio import processing_utils

from app.gradio_ui.cache_files import write_images_whole


def test_an_image_written_by_two_visitors_at_once_is_only_ever_read_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(processing_utils, "save_pil_to_cache", processing_utils.save_pil_to_cache)
    write_images_whole()
    image = np.random.default_rng(0).integers(0, 255, (400, 400, 3), dtype=np.uint8)  # ~0.5 MB as WebP
    path = Path(processing_utils.save_img_array_to_cache(image, str(tmp_path)))
    whole = path.read_bytes()
    path.unlink()
    done, short = threading.Event(), []

    def visitor() -> None:
        for _ in range(40):
            processing_utils.save_img_array_to_cache(image, str(tmp_path))
            path.unlink(missing_ok=True)  # as if new, so that the next visitor writes it again

    def page() -> None:
        while not done.is_set():
            try:
                read = path.read_bytes()
            except FileNotFoundError:
                continue
            if read != whole:
                short.append(len(read))

    reader = threading.Thread(target=page)
    reader.start()
    visitors = [threading.Thread(target=visitor) for _ in range(2)]
    for thread in visitors:
        thread.start()
    for thread in visitors:
        thread.join(120)
    done.set()
    reader.join(10)
    assert not short, f"read {len(short)} times cut short (e.g. {short[0]} of {len(whole)} bytes)"
    assert not list(tmp_path.rglob(".image.*")), "a staging file was left behind"
