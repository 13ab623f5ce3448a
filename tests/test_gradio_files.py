"""Files the Gradio front end serves: an image is never read half-written when two visitors' maps are the same
image at once, and a page's exports are deleted with its session, not another page's."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from gradio import processing_utils
from gradio.context import LocalContext

from app.gradio_ui.cache_files import write_images_whole
from app.gradio_ui.downloads import delete_exports, saved
from app.tabs import Download


def test_an_image_written_by_two_visitors_at_once_is_only_ever_read_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(processing_utils, "save_pil_to_cache", processing_utils.save_pil_to_cache)
    write_images_whole()
    image = np.random.default_rng(0).integers(0, 255, (400, 400, 3), dtype=np.uint8)  # ~0.5 MB as WebP
    path = Path(processing_utils.save_img_array_to_cache(image, str(tmp_path)))
    whole = path.read_bytes()
    path.unlink()
    done, short = threading.Event(), []

    def visitor() -> None:
        for _ in range(12):  # each write about 50 ms, read back a few hundred times by the page meanwhile
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


def test_a_pages_exports_are_deleted_with_its_session_and_no_other(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    made = {}
    for session in ("page1", "page12", None):  # "page1" is a prefix of "page12"; None: an API call without one
        LocalContext.request.set(SimpleNamespace(session_hash=session) if session else None)
        made[session] = Path(saved(Download(b"png bytes", "fig9.png")))
    LocalContext.request.set(None)
    assert all(path.read_bytes() == b"png bytes" and path.parent.parent == tmp_path for path in made.values())
    assert delete_exports("page1") == 1
    assert not made["page1"].exists() and made["page12"].exists() and made[None].exists()
    assert delete_exports("../*") == 0 and delete_exports("") == 0  # nothing but a page's own folders
    assert made["page12"].exists() and made[None].exists()
