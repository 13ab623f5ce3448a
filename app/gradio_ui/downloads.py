"""Downloads in the Gradio front end: a file box hidden until its button is pressed, and a Download written
where Gradio can serve it, in a folder named for the page's session and deleted with it. The export handlers return
plain paths, so API clients get the file itself."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import gradio as gr

from app.backend.service import ModelRun
from app.gradio_ui.errors import user_facing
from app.server.gradio_adapter import request_session, upload_folder
from app.tabs import Download
from app.tabs.compare import CompareTab, Look
from app.views.attention import ViewOptions


def exports_prefix(session: str | None) -> str:
    """The start of the names of the folders a page's exports are written in ("export-" without a session)."""
    safe = re.sub(r"[^A-Za-z0-9]", "", session or "")[:64]
    return f"export-{safe}-" if safe else "export-"


def saved(download: Download) -> str:
    """A Download written to a fresh folder inside Gradio's cache, for a gr.File output: Gradio hands that very
    file out (no copy elsewhere). The folder is named for the page's session (its handler's request), so it goes
    when the page's session is dropped (`delete_exports`), and with the rest of Gradio's cache after an hour."""
    cache = Path(upload_folder())
    cache.mkdir(parents=True, exist_ok=True)
    session = request_session()
    path = Path(tempfile.mkdtemp(prefix=exports_prefix(session), dir=cache)) / download.filename
    path.write_bytes(download.data)
    return str(path)


def delete_exports(session: str) -> int:
    """Delete the folders of the exports made for `session`'s page; how many."""
    prefix = exports_prefix(session)
    if prefix == exports_prefix(None):
        return 0
    folders = [folder for folder in Path(upload_folder()).glob(f"{prefix}*") if folder.is_dir()]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return len(folders)


def shown_on(button: gr.Button, file: gr.File) -> None:
    """Show `file` (made hidden: an empty box is only clutter) when `button` is pressed. Made before the
    export's own listener, which the browser then runs after it."""
    button.click(lambda: gr.File(visible=True), None, file, queue=False, api_visibility="private")


def figure_export(tab: CompareTab) -> Callable:
    """The handler of "Export figure" over `tab`."""

    @user_facing
    def export_one_figure(
        runs: list[ModelRun],
        name: str,
        fmt: str,
        log_y: bool = True,
        shade: int | None = None,
        photo: str | None = None,
    ) -> str:
        """The chosen figure of the analyzed models as a PNG (2x) or SVG file, drawn as on screen, its subtitle
        naming the `photo` analyzed (a path or a file name)."""
        look = Look(log_y=log_y, shaded=shade)
        return saved(tab.export_figure(runs, name, fmt, look, Path(photo).name if photo else ""))

    return export_one_figure


def pack_export(tab: CompareTab) -> Callable:
    """The handler of "Export teaching pack" over `tab`."""

    @user_facing
    def export_pack(
        runs: list[ModelRun],
        photo: str | None,
        colormap: str,
        log_y: bool = True,
        shade: int | None = None,
        views: dict[int, ViewOptions] | None = None,
    ) -> str:
        """Every figure, input, map and value of the analysis, with a handout, as one ZIP; each map as its
        column shows it (`views`: the session's last view per column); `photo` is the one analyzed (a path or
        a file name), not the one in the upload box now."""
        chosen = [(views or {}).get(slot) for slot in range(len(runs))]
        look = Look(colormap, log_y=log_y, shaded=shade)
        return saved(tab.export_pack(runs, Path(photo).name if photo else "photo", look, chosen))

    return export_pack
