"""Downloads in the Gradio front end: a file box hidden until its button is pressed, and a Download written
where Gradio can serve it. The export handlers return plain paths, so API clients get the file itself."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr
from gradio.utils import get_upload_folder

from app.tabs import Download


def saved(download: Download) -> str:
    """A Download written to a fresh folder inside Gradio's cache, for a gr.File output: Gradio hands that very
    file out (no copy elsewhere) and deletes it with the rest of its cache (delete_cache)."""
    cache = Path(get_upload_folder())
    cache.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="export-", dir=cache)) / download.filename
    path.write_bytes(download.data)
    return str(path)


def shown_on(button: gr.Button, file: gr.File) -> None:
    """Show `file` (made hidden: an empty box is only clutter) when `button` is pressed. Made before the
    export's own listener, which the browser then runs after it."""
    button.click(lambda: gr.File(visible=True), None, file, queue=False, api_visibility="private")
