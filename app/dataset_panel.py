"""Dataset curves in Gradio: Figs 2a, 8 and 9 averaged over a ZIP of images for the picked models,
with the figures for slides. Built inside gr.Blocks, in the Compare tab."""
from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from app import explanations as text
from app import export, figures
from app.gradio_errors import user_error, watched
from app.service import (
    MAX_DATASET_BYTES,
    MAX_DATASET_IMAGES,
    MAX_MODELS,
    Service,
    picked_models,
)
from engine.errors import EngineError
from engine.results import ModelResult


def build(service: Service, models: gr.CheckboxGroup, typed: gr.Textbox, weights: gr.Radio) -> None:
    """The accordion: ZIP upload, run button, status, Fig 8 and Fig 9, Fig 2a per model, export."""

    def measure(archive: str | None, names: list[str], typed_names: str | None, mode: str,
                request: gr.Request, progress: gr.Progress = gr.Progress()) -> list:
        if not archive:
            raise user_error("Upload a ZIP of images first.")
        try:
            results = service.dataset_curves(archive, picked_models(names, typed_names), service.network_weights(mode),
                                             report=watched(progress, request))
        except (EngineError, ValueError) as exc:
            raise user_error(exc) from None
        summary = "; ".join(r.label for r in results)
        spectra = [gr.Plot(figures.fourier_spectrum(results[i]) if i < len(results) else None, visible=i < len(results))
                   for i in range(MAX_MODELS)]
        return [results, f"Averaged over the ZIP: {summary}.", figures.high_frequency(results),
                figures.variance(results, True), *spectra, gr.Button(interactive=True)]

    def export_zip(results: list[ModelResult], progress: gr.Progress = gr.Progress()) -> gr.File:
        if not results:
            raise user_error("Measure a ZIP of images first.")
        progress(0.1, desc="Rendering the figures")
        try:
            data = export.dataset_zip(results, service.device_name)
        except export.ExportError as exc:
            raise user_error(exc) from None
        path = Path(tempfile.mkdtemp()) / "dataset-curves.zip"
        path.write_bytes(data)
        return gr.File(str(path), visible=True)

    with gr.Accordion("Dataset curves: Figs 2a, 8 and 9 over a ZIP of images", open=False, elem_id="dataset"):
        gr.Markdown(text.DATASET.format(images=MAX_DATASET_IMAGES, megabytes=MAX_DATASET_BYTES // 2**20))
        results = gr.State([])
        with gr.Row(equal_height=False):
            archive = gr.File(label="ZIP of images", file_types=[".zip"], elem_id="dataset-zip")
            with gr.Column():
                run = gr.Button("Measure the ZIP", variant="primary", elem_id="dataset-run")
                status = gr.Markdown(elem_id="dataset-status")
                export_button = gr.Button("Export these figures (PNG, SVG, JSON, CSV)", interactive=False)
                exported = gr.File(label="Download", interactive=False, visible=False)
        with gr.Row(equal_height=False):
            high_frequency = gr.Plot(show_label=False, elem_id="dataset-high-frequency")
            variance = gr.Plot(show_label=False, elem_id="dataset-variance")
        with gr.Row(equal_height=False):
            spectra = [gr.Plot(show_label=False, visible=False, elem_id=f"dataset-spectrum-{i}") for i in range(MAX_MODELS)]
    run.click(measure, [archive, models, typed, weights], [results, status, high_frequency, variance, *spectra, export_button],
              api_name="dataset_curves", show_progress_on=status)
    export_button.click(export_zip, results, exported, api_name="export_dataset")
