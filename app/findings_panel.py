"""The Paper figures tab (Figs 1a, 1b, 1c/4, 2b, 10a, 10b, 12b) in Gradio: the stored results at once,
Recompute per analysis, Fig 2b on the user's photo, and every figure for slides. Built inside gr.Blocks."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable

import gradio as gr

from app import explanations as text
from app import export
from app.gradio_errors import user_error, watched
from app.paper_findings import (
    MAX_IMAGES,
    ORDER,
    PaperFindings,
    caption,
    figures,
    for_slides,
    panels,
    sections,
)
from engine.errors import EngineError
from engine.findings import FINDINGS

PER_ROW = 2


def recompute(board: PaperFindings, name: str, panels_: int) -> Callable:
    """The handler running analysis `name` again for this session and re-drawing its panel."""

    def run(recomputed: dict, images: float, request: gr.Request, progress: gr.Progress = gr.Progress()) -> list:
        try:
            section = board.recompute(name, int(images), report=watched(progress, request))
        except (EngineError, ValueError) as exc:
            raise user_error(exc) from None
        drawn = figures(name, section)
        return [{**recomputed, name: section}, *(drawn[i] if i < len(drawn) else None for i in range(panels_)),
                caption(name, section, recomputed=True)]

    return run


def photo_noise(board: PaperFindings) -> Callable:
    def run(image: str | None, request: gr.Request, progress: gr.Progress = gr.Progress()):
        if not image:
            raise user_error("Upload a photo or pick a sample first.")
        try:
            figure = board.photo_noise(image, report=watched(progress, request))
        except (EngineError, ValueError) as exc:
            raise user_error(exc) from None
        return gr.Plot(figure, visible=True)

    return run


def export_zip(recomputed: dict, progress: gr.Progress = gr.Progress()) -> str:
    """Every figure of the tab as PNG (2x) and SVG, titled with its models' weights, in one ZIP."""
    progress(0.1, desc="Rendering the figures")
    try:
        data = export.figures_zip(for_slides(sections(recomputed)))
    except export.ExportError as exc:
        raise user_error(exc) from None
    path = Path(tempfile.mkdtemp()) / "paper-figures.zip"
    path.write_bytes(data)
    return str(path)


def build(board: PaperFindings, image: gr.Image) -> None:
    """Every analysis as explanation, figures and caption, with its Recompute controls."""
    shown = sections({})
    recomputed = gr.State({})
    gr.Markdown(text.FINDINGS_INTRO)
    for name in ORDER:
        gr.Markdown(text.FINDINGS[name])
        drawn = figures(name, shown[name])
        plots = []
        for row in range(0, panels(name), PER_ROW):  # heat maps and lesion plots two to a row
            with gr.Row(equal_height=False):
                plots += [gr.Plot(drawn[i] if i < len(drawn) else None, show_label=False, elem_id=f"paper-{name}-{i}")
                          for i in range(row, min(row + PER_ROW, panels(name)))]
        note = gr.Markdown(caption(name, shown[name]), elem_classes="caption", elem_id=f"paper-{name}-caption")
        if name not in FINDINGS:
            continue
        with gr.Row():
            images = gr.Slider(10, MAX_IMAGES, value=FINDINGS[name].images, step=10, label="Subset images",
                               elem_id=f"paper-{name}-images")
            button = gr.Button(f"Recompute ({FINDINGS[name].figure})", elem_id=f"paper-{name}-recompute")
        button.click(recompute(board, name, len(plots)), [recomputed, images], [recomputed, *plots, note],
                     api_name=f"paper_{name}", show_progress_on=note)
        if name == "noise":
            own = gr.Button("Noise on your photo", elem_id="paper-noise-photo")
            photo_plot = gr.Plot(show_label=False, visible=False, elem_id="paper-noise-photo-plot")
            own.click(photo_noise(board), image, photo_plot, api_name="paper_noise_photo")
    with gr.Row():
        save = gr.Button("Export these figures (PNG and SVG, ZIP)", elem_id="paper-export")
        saved = gr.File(label="Download", interactive=False, elem_id="paper-export-file")
    save.click(export_zip, recomputed, saved, api_name="paper_export")
