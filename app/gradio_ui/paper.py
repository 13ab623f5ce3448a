"""The Paper figures tab in Gradio: widgets and bindings over app.tabs.paper."""

from __future__ import annotations

from typing import Callable

import gradio as gr

from app.exports.paper_findings import MAX_IMAGES
from app.gradio_ui.downloads import saved, shown_on
from app.gradio_ui.errors import user_facing, watched
from app.tabs.paper import NOISE, PaperTab, Recomputed
from app.views.texts import LABEL

PER_ROW = 2


def recompute(tab: PaperTab, name: str, places: int) -> Callable:
    """The handler running analysis `name` again for this session and re-drawing its panel."""

    @user_facing
    def run(recomputed: Recomputed, images: float, request: gr.Request, progress: gr.Progress = gr.Progress()) -> list:
        recomputed, section = tab.recompute(recomputed, name, int(images), report=watched(progress, request))
        drawn = section.figures
        return [recomputed, *(drawn[i] if i < len(drawn) else None for i in range(places)), section.caption]

    return run


def build(tab: PaperTab, image: gr.Image) -> None:
    """Every analysis as explanation, figures and caption, with its Recompute controls."""

    @user_facing
    def photo_noise(photo: str | None, request: gr.Request, progress: gr.Progress = gr.Progress()):
        return gr.Plot(tab.photo_noise(photo, report=watched(progress, request)), visible=True)

    @user_facing
    def export_zip(recomputed: Recomputed, progress: gr.Progress = gr.Progress()) -> str:
        progress(0.1, desc="Rendering the figures")
        return saved(tab.export(recomputed))

    recomputed = gr.State({})
    gr.Markdown(tab.intro)
    for section in tab.sections({}):
        name = section.name
        gr.Markdown(section.explanation)
        plots = []
        for row in range(0, section.panels, PER_ROW):  # heat maps and lesion plots two to a row
            with gr.Row(equal_height=False):
                plots += [
                    gr.Plot(
                        section.figures[i] if i < len(section.figures) else None,
                        show_label=False,
                        elem_id=f"paper-{name}-{i}",
                    )
                    for i in range(row, min(row + PER_ROW, section.panels))
                ]
        note = gr.Markdown(section.caption, elem_classes="caption", elem_id=f"paper-{name}-caption")
        if section.recompute is None:
            continue
        with gr.Row():
            images = gr.Slider(
                10, MAX_IMAGES, value=section.images, step=10, label=LABEL.paper_images, elem_id=f"paper-{name}-images"
            )
            button = gr.Button(section.recompute, elem_id=f"paper-{name}-recompute")
        button.click(
            recompute(tab, name, len(plots)),
            [recomputed, images],
            [recomputed, *plots, note],
            api_name=f"paper_{name}",
            show_progress_on=note,
        )
        if name == NOISE:
            own = gr.Button(LABEL.photo_noise, elem_id="paper-noise-photo")
            photo_plot = gr.Plot(show_label=False, visible=False, elem_id="paper-noise-photo-plot")
            own.click(photo_noise, image, photo_plot, api_name="paper_noise_photo")
    with gr.Row():
        save = gr.Button(LABEL.paper_export, elem_id="paper-export")
        saved_file = gr.File(label=LABEL.download, interactive=False, visible=False, elem_id="paper-export-file")
    shown_on(save, saved_file)
    save.click(export_zip, recomputed, saved_file, api_name="paper_export")
