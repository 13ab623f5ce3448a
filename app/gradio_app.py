"""ViT explorer in Gradio: upload a photo, compare models side by side, explore what they measure.

    python -m app.gradio_app --host 127.0.0.1 --port 7860
"""
from __future__ import annotations

import argparse
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import gradio as gr
from starlette.middleware import Middleware

from app import alternet_panel, dataset_panel, export, figures, findings_panel
from app import explanations as text
from app.attention_view import (
    COLORMAPS,
    MEAN,
    ViewOptions,
    attention_layers,
    head_choices,
    render,
)
from app.cifar_lab import CifarLab
from app.gradio_errors import user_error, watched
from app.guard import RequestGuard, Uploads
from app.paper_findings import PaperFindings
from app.service import (
    AUTO,
    DEFAULT_MODELS,
    MAX_MODELS,
    SAMPLES,
    WEIGHT_LABELS,
    WEIGHT_MODES,
    ModelRun,
    Service,
    picked_models,
)
from engine.errors import EngineError

UPLOADS = Uploads.gradio(tuple(SAMPLES))
service = Service.start(uploads=UPLOADS)
lab = CifarLab(service)
board = PaperFindings(service)
QUEUE_SIZE = 64  # requests waiting past this are refused with "queue is full"
CONCURRENCY = 2  # events of one kind in progress at once; models themselves run one at a time
MAX_UPLOAD = "50mb"
SESSION_TTL_S = 3600  # a browser session's stored results are dropped an hour after their last change
FILE_TTL_S = 3600  # uploaded and generated files are deleted after an hour (checked every 10 minutes)


@dataclass
class Slot:
    """One model's column: header, predictions, where it looks (with its controls), Fig 2a."""

    column: gr.Column
    header: gr.Markdown
    predictions: gr.Label
    view: gr.Image
    caption: gr.Markdown
    controls: gr.Group
    layer: gr.Slider
    head: gr.Dropdown
    rollout: gr.Checkbox
    lesion: gr.Dropdown
    spectrum_column: gr.Column
    spectrum: gr.Plot

    @property
    def options(self) -> list[gr.components.Component]:
        return [self.layer, self.head, self.rollout]

    @property
    def outputs(self) -> list[gr.components.Component]:
        return [self.column, self.header, self.predictions, self.view, self.caption, self.controls,
                *self.options, self.lesion, self.spectrum_column, self.spectrum]


def compare_column(i: int) -> list:
    with gr.Column(visible=False, min_width=260, elem_id=f"model-{i}") as column:
        header = gr.Markdown()
        predictions = gr.Label(num_top_classes=5, label="Top-5 predictions")
        view = gr.Image(label="Where it looks", interactive=False, format="png", height=340, buttons=["download", "fullscreen"],
                        elem_id=f"view-{i}")
        caption = gr.Markdown(elem_classes="caption")
        with gr.Group(visible=False) as controls:
            layer = gr.Slider(1, 12, value=12, step=1, label="Layer")
            with gr.Row():
                head = gr.Dropdown([MEAN], value=MEAN, label="Head", min_width=80)
                rollout = gr.Checkbox(label="Rollout (all layers)", min_width=80)
        lesion = gr.Dropdown([], value=[], multiselect=True, label="Switch off units (lesion, Fig 10b)",
                             info=text.LESION, elem_id=f"lesion-{i}")
    return [column, header, predictions, view, caption, controls, layer, head, rollout, lesion]


def slot_updates(slot: Slot, run: ModelRun | None, colormap: str, opacity: float) -> dict:
    """The slot's updates after an analysis: filled in for `run`, hidden when unused."""
    if run is None:
        return {slot.column: gr.Column(visible=False), slot.spectrum_column: gr.Column(visible=False)}
    result = run.result
    badge = text.RANDOM_BADGE.format(seed=service.seed) if result.random_weights else result.weights
    suffix = " · random weights" if result.random_weights else ""
    layers = attention_layers(run)
    has_rollout = result.attention is not None and result.attention.rollout is not None
    image, caption = render(run, ViewOptions(layer=layers, head=MEAN), colormap, opacity)
    return {
        slot.column: gr.Column(visible=True),
        slot.header: f"### {result.label}\n{badge}",
        slot.predictions: gr.Label(top5(result), label=f"Top-5 predictions{suffix}", show_heading=not result.random_weights),
        slot.view: gr.Image(image, label=f"Where it looks{suffix}"),
        slot.caption: caption,
        slot.controls: gr.Group(visible=layers > 0),
        slot.layer: gr.Slider(1, max(layers, 2), value=max(layers, 1), step=1),
        slot.head: gr.Dropdown(head_choices(run), value=MEAN),
        slot.rollout: gr.Checkbox(value=False, visible=has_rollout),
        slot.lesion: gr.Dropdown(choices=list(run.units), value=list(run.lesion)),
        slot.spectrum_column: gr.Column(visible=True),
        slot.spectrum: figures.fourier_spectrum(result),
    }


def top5(result) -> dict[str, float]:
    """The first image's top-5 for gr.Label; with random weights every probability is near 1/classes, so
    each class also shows its probability to two decimals (the bars alone would all read 0%)."""
    predictions = result.predictions[0]
    if not result.random_weights:
        return {p.label: p.probability for p in predictions}
    return {f"{p.label} ({p.probability:.2%})": p.probability for p in predictions}


def analyze_page(image: str | None, names: list[str], weights: str, colormap: str, opacity: float, log_y: bool,
                 typed: str | None = None, request: gr.Request = None, progress: gr.Progress = gr.Progress()) -> dict:
    """Run the analysis for the page: every panel's update, and the runs kept in the session state.
    `typed` adds any timm models named in the text box to the checked ones."""
    if not image:
        raise user_error("Upload a photo or pick a sample first.")
    start = time.perf_counter()
    try:
        runs = service.analyze(image, picked_models(names, typed), weights,
                               report=watched(progress, request))
    except (EngineError, ValueError) as exc:
        raise user_error(exc) from None
    seconds = time.perf_counter() - start
    results = [run.result for run in runs]
    updates = {
        state: runs,
        status: f"Analyzed {len(runs)} model{'s' * (len(runs) > 1)} in {seconds:.1f} s.",
        high_frequency: figures.high_frequency(results),
        variance: figures.variance(results, log_y),
        figure_name: gr.Dropdown(export.figure_choices(results), value="fig9-variance"),
        exported: gr.File(value=None),  # an export of the previous analysis must not stay on offer
    }
    for i, slot in enumerate(slots):
        updates |= slot_updates(slot, runs[i] if i < len(runs) else None, colormap, opacity)
    return updates


def redraw(slot: int) -> Callable:
    """The handler re-drawing one slot's map from the stored results: no model runs."""

    def view(runs: list[ModelRun], colormap: str, opacity: float, layer: float, head: str, rollout: bool):
        if slot >= len(runs):
            return gr.skip(), gr.skip()
        return render(runs[slot], ViewOptions(int(layer), head, rollout), colormap, opacity)

    return view


def lesion(slot: int) -> Callable:
    """The handler re-running one slot's model with the chosen units switched off (none: restored)."""

    def switch_off(runs: list[ModelRun], indices: list[int], colormap: str, opacity: float, log_y: bool) -> dict:
        if slot >= len(runs):
            raise user_error("Analyze a photo first.")
        try:
            changed = service.lesioned(runs[slot], indices or [])
        except EngineError as exc:
            raise user_error(exc) from None
        runs = [changed if i == slot else run for i, run in enumerate(runs)]
        results = [run.result for run in runs]
        return slot_updates(slots[slot], changed, colormap, opacity) | {
            state: runs, high_frequency: figures.high_frequency(results), variance: figures.variance(results, log_y)
        }

    return switch_off


def analyze(image: dict, models: list[str], weights: str = "") -> dict:
    """The engine CLI's JSON for one image (a file) and a list of model names; weights 'auto' (or empty:
    the trained weights where they can be had, else random), 'pretrained', 'random', or the name of a
    bundled checkpoint (never a path)."""
    try:
        return service.analysis_json(service.analyze(image, models, service.network_weights(weights)))
    except (EngineError, ValueError) as exc:
        raise user_error(exc) from None


def export_one_figure(runs: list[ModelRun], name: str, fmt: str) -> str:
    """The chosen figure of the analyzed models as a PNG (2x) or SVG file."""
    if not runs:
        raise user_error("Analyze a photo first.")
    try:
        return str(export.export_figure([run.result for run in runs], name, fmt, Path(tempfile.mkdtemp())))
    except export.ExportError as exc:
        raise user_error(exc) from None


def export_pack(runs: list[ModelRun], image: str | None, colormap: str, progress: gr.Progress = gr.Progress()) -> str:
    """Every figure, input, map and value of the analysis, with a handout, as one ZIP."""
    if not runs:
        raise user_error("Analyze a photo first.")
    progress(0.1, desc="Rendering the figures")
    name = Path(image).name if image else "photo"
    try:
        pack = export.teaching_pack([run.result for run in runs], [runs], [name], service.device_name, colormap)
    except export.ExportError as exc:
        raise user_error(exc) from None
    path = Path(tempfile.mkdtemp()) / "teaching-pack.zip"
    path.write_bytes(pack.zip())
    return str(path)


def forward_passes() -> int:
    """Forward passes the loaded models have made since the server started."""
    return service.forward_passes


def on_load():
    return gr.Markdown(text.OFFLINE, visible=not service.online)


with gr.Blocks(title="ViT explorer", delete_cache=(600, FILE_TTL_S)) as demo:
    gr.Markdown(text.INTRO)
    banner = gr.Markdown(visible=False, elem_id="banner")
    state = gr.State([], time_to_live=SESSION_TTL_S)
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            image = gr.Image(type="filepath", label="Your photo", sources=["upload", "clipboard"], height=320,
                             elem_id="image-input")
        with gr.Column(scale=3):
            models = gr.CheckboxGroup(
                service.models(), value=list(DEFAULT_MODELS), label=f"Models (up to {MAX_MODELS})"
            )
            typed_models = gr.Textbox(label="Any timm model", placeholder="e.g. convnext_atto, mobilevit_xxs",
                                      info=text.ANY_TIMM, elem_id="typed-models")
            weights = gr.Radio([(WEIGHT_LABELS[mode], mode) for mode in WEIGHT_MODES], value=AUTO, label="Weights",
                               info=text.WEIGHTS)
            run = gr.Button("Analyze", variant="primary")
            status = gr.Markdown("Pick a photo and models, then **Analyze**.", min_height=48, elem_id="status")
            gr.Examples([[str(path)] for path in SAMPLES], inputs=image, label="Sample photos")
    with gr.Tabs():
        with gr.Tab("Compare models", id="compare"):
            gr.Markdown(text.COMPARE)
            with gr.Row():
                colormap = gr.Dropdown(list(COLORMAPS), value="inferno", label="Colormap")
                opacity = gr.Slider(0, 1, value=0.6, step=0.05, label="Map opacity")
            with gr.Row(equal_height=False):
                compare = [compare_column(i) for i in range(MAX_MODELS)]
            gr.Markdown(text.FOURIER)
            spectra = []
            with gr.Row(equal_height=False):
                for i in range(MAX_MODELS):
                    with gr.Column(visible=False, min_width=260) as column:
                        spectra.append((column, gr.Plot(show_label=False, elem_id=f"spectrum-{i}")))
            with gr.Accordion("Export for teaching: figures as PNG or SVG, or the whole teaching pack", open=False):
                with gr.Row(equal_height=False):
                    figure_name = gr.Dropdown([], label="Figure", elem_id="export-figure")
                    figure_format = gr.Radio(["png", "svg"], value="png", label="Format")
                    with gr.Column():
                        export_one = gr.Button("Export figure", elem_id="export-one")
                        export_all = gr.Button("Export teaching pack (ZIP)", elem_id="export-pack")
                exported = gr.File(label="Download", interactive=False, elem_id="export-file")
            with gr.Row(equal_height=False):
                with gr.Column():
                    gr.Markdown(text.HIGH_FREQUENCY)
                    high_frequency = gr.Plot(show_label=False, elem_id="high-frequency")
                with gr.Column():
                    gr.Markdown(text.VARIANCE)
                    variance = gr.Plot(show_label=False, elem_id="variance")
                    log_y = gr.Checkbox(value=True, label="Log variance axis")
            dataset_panel.build(service, models, typed_models, weights)
        with gr.Tab("AlterNet (Section 4)", id="alternet"):
            alternet_panel.build(demo, lab, image)
        with gr.Tab("Paper figures", id="paper"):
            findings_panel.build(board, image)
    slots = [Slot(*parts, *spectrum) for parts, spectrum in zip(compare, spectra)]

    run.click(
        analyze_page,
        [image, models, weights, colormap, opacity, log_y, typed_models],
        [state, status, *[c for slot in slots for c in slot.outputs], high_frequency, variance, figure_name, exported],
        api_name="run",
        show_progress_on=status,
    )
    for i, slot in enumerate(slots):
        inputs, outputs = [state, colormap, opacity, *slot.options], [slot.view, slot.caption]
        gr.on([slot.layer.input, slot.head.input, slot.rollout.input], redraw(i), inputs, outputs, api_name=f"view_{i}")
        gr.on([colormap.input, opacity.input], redraw(i), inputs, outputs, api_visibility="private")
        slot.rollout.input(lambda rollout: [gr.Slider(interactive=not rollout), gr.Dropdown(interactive=not rollout)],
                           slot.rollout, [slot.layer, slot.head], api_visibility="private")  # rollout takes every layer and head
        gr.on([slot.lesion.input], lesion(i), [state, slot.lesion, colormap, opacity, log_y],
              [state, *slot.outputs, high_frequency, variance], api_name=f"lesion_{i}", show_progress_on=slot.lesion)
    log_y.input(lambda runs, log: figures.variance([r.result for r in runs], log), [state, log_y], variance,
                api_visibility="private")
    gr.api(analyze, api_name="analyze")
    gr.api(forward_passes, api_name="forward_passes")
    export_one.click(export_one_figure, [state, figure_name, figure_format], exported, api_name="export_figure")
    export_all.click(export_pack, [state, image, colormap], exported, api_name="export_pack")
    demo.load(on_load, None, banner, api_visibility="private")

CSS = """#banner, #alternet-banner {background: #fff4e5; border-left: 4px solid #f59e0b; padding: 8px 12px}
.caption {font-size: 0.85em}"""


def sweep_uploads() -> None:
    """Every 10 minutes, delete upload-folder files older than FILE_TTL_S, dropped uploads included."""
    while True:
        if deleted := UPLOADS.sweep(FILE_TTL_S):
            logging.getLogger("vit_explorer").info("deleted %d upload files over %d s old", deleted, FILE_TTL_S)
        time.sleep(600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    threading.Thread(target=sweep_uploads, daemon=True, name="sweep-uploads").start()
    demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=CONCURRENCY).launch(
        server_name=args.host, server_port=args.port, css=CSS, max_file_size=MAX_UPLOAD, show_error=True,
        app_kwargs={"middleware": [Middleware(RequestGuard, uploads=UPLOADS, queue=lambda: demo._queue)]},
    )


if __name__ == "__main__":
    main()
