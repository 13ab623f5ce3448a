"""The dataset panel in Gradio (inside the Compare tab): widgets and bindings over app.tabs.dataset."""

from __future__ import annotations

import gradio as gr

from app.backend.service import MAX_MODELS
from app.gradio_ui.downloads import saved, shown_on
from app.gradio_ui.errors import user_facing, watched
from app.tabs.dataset import EXPLANATION, DatasetTab, DatasetView
from app.views.texts import LABEL


def build(tab: DatasetTab, models: gr.CheckboxGroup, typed: gr.Textbox, weights: gr.Radio) -> None:
    """The accordion: ZIP upload, run button, status, Fig 8 and Fig 9, Fig 2a per model, export."""

    @user_facing
    def measure(
        archive: str | None,
        names: list[str],
        typed_names: str | None,
        mode: str,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(),
    ) -> list:
        shown = tab.measure(archive, names, typed_names, mode, report=watched(progress, request))
        spectra = [
            gr.Plot(shown.spectra[i] if i < len(shown.spectra) else None, visible=i < len(shown.spectra))
            for i in range(MAX_MODELS)
        ]
        return [
            shown,
            shown.summary,
            shown.high_frequency,
            shown.variance,
            *spectra,
            gr.Button(interactive=True),
        ]

    @user_facing
    def export_zip(view: DatasetView | None, progress: gr.Progress = gr.Progress()) -> str:
        progress(0.1, desc="Rendering the figures")
        return saved(tab.export(view))

    with gr.Accordion(LABEL.dataset, open=False, elem_id="dataset"):
        gr.Markdown(EXPLANATION)
        results = gr.State(None)  # the DatasetView shown
        with gr.Row(equal_height=False):
            archive = gr.File(label=LABEL.dataset_zip, file_types=[".zip"], elem_id="dataset-zip")
            with gr.Column():
                run = gr.Button(LABEL.dataset_run, variant="primary", elem_id="dataset-run")
                status = gr.Markdown(elem_id="dataset-status")
                export_button = gr.Button(LABEL.dataset_export, interactive=False)
                exported = gr.File(label=LABEL.download, interactive=False, visible=False)
        with gr.Row(equal_height=False):
            high_frequency = gr.Plot(show_label=False, elem_id="dataset-high-frequency")
            variance = gr.Plot(show_label=False, elem_id="dataset-variance")
        with gr.Row(equal_height=False):
            spectra = [
                gr.Plot(show_label=False, visible=False, elem_id=f"dataset-spectrum-{i}") for i in range(MAX_MODELS)
            ]
    run.click(
        measure,
        [archive, models, typed, weights],
        [results, status, high_frequency, variance, *spectra, export_button],
        api_name="dataset_curves",
        show_progress_on=status,
    )
    shown_on(export_button, exported)
    export_button.click(export_zip, results, exported, api_name="export_dataset")
