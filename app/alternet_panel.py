"""The AlterNet tab (paper Section 4): choose where the MSA blocks go, see the architecture (Fig 11),
its cost and the Fig 8/9 curves next to the CIFAR ResNet and ViT. Built inside the app's gr.Blocks."""
from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from app import alternet_view as view
from app import explanations as text
from app import export, figures
from app.cifar_lab import STEPS, CifarLab, LabRun, step_of
from app.gradio_errors import user_error, watched
from engine.errors import EngineError
from engine.placement import PAPER_DEPTHS, Placement, PlacementError, parse

SUBSET_DEFAULT, SUBSET_MAX = 100, 1000


def _placement(spec: str) -> Placement:
    try:
        return parse(spec, PAPER_DEPTHS)
    except PlacementError as exc:
        raise user_error(exc) from None


def set_step(step: int) -> list:
    """Build-up step -> the grid's toggles and the spec text."""
    if step is None or not 0 <= int(step) < len(STEPS):
        raise user_error(f"the build-up step must be 0 to {len(STEPS) - 1}, got {step}")
    placement = STEPS[int(step)]
    return [*view.grid_values(placement), str(placement)]


def set_grid(*values: list[int]) -> list:
    """Toggles -> the spec text and the build-up step they match (none for a custom placement)."""
    try:
        placement = view.from_grid(list(values))
    except PlacementError as exc:
        raise user_error(exc) from None
    return [step_of(placement), str(placement)]


def apply_spec(spec: str) -> list:
    """Typed spec -> the normalized spec, its build-up step and the toggles; a readable error if bad."""
    placement = _placement(spec)
    return [str(placement), step_of(placement), *view.grid_values(placement)]


def build(demo: gr.Blocks, lab: CifarLab, image: gr.Image) -> None:
    """The tab's components and events; `image` is the page's photo input."""
    gr.Markdown(text.ALTERNET)
    with gr.Row(equal_height=False):
        with gr.Column(scale=1):
            step = gr.Radio([(str(n), n) for n in range(len(STEPS))], value=len(STEPS) - 1,
                            label="Build-up step (Fig 12a)", info="Sets the toggles below", elem_id="alternet-step")
            grids = [
                gr.CheckboxGroup(choices, value=values, label=f"Stage {s + 1}: MSA blocks",
                                 info="Block 1 is always Conv: it widens" + (" and subsamples" if s else ""),
                                 elem_id=f"alternet-stage-{s + 1}")
                for s, (choices, values) in enumerate(zip(view.grid_choices(), view.grid_values(STEPS[-1])))
            ]
            spec = gr.Textbox(str(STEPS[-1]), label="MSA blocks as text: s<stage>:<block>, 1-based (Enter applies)",
                              elem_id="alternet-spec")
        with gr.Column(scale=1):
            gr.Markdown(view.steps_markdown(), elem_id="alternet-steps")
    drawing = gr.HTML(elem_id="alternet-drawing", padding=True)
    cost = gr.Markdown(elem_id="alternet-cost")
    banner = gr.Markdown(elem_id="alternet-banner", visible=False)
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=220):
            seen = gr.Image(label="Input, 32×32", interactive=False, format="png", height=200,
                            elem_id="alternet-input", buttons=["fullscreen"])
            count = gr.Slider(10, SUBSET_MAX, value=SUBSET_DEFAULT, step=10, label="Test images to average")
            average = gr.Button("Average over CIFAR-10 test images", elem_id="alternet-average", size="md")
        with gr.Column(scale=4):
            source = gr.Markdown(elem_id="alternet-source")
            with gr.Row(equal_height=False):
                high_frequency = gr.Plot(show_label=False, elem_id="alternet-high-frequency")
                variance = gr.Plot(show_label=False, elem_id="alternet-variance")
            accuracy = gr.Markdown(elem_id="alternet-accuracy")
            with gr.Row():
                export_button = gr.Button("Export these figures (PNG, SVG)", size="sm", elem_id="alternet-export")
                exported = gr.File(label="Download", interactive=False, elem_id="alternet-export-file")
    shown = gr.State(None, time_to_live=3600)  # the (LabRun, placement) on screen, for the export
    outputs = [drawing, cost, banner, seen, high_frequency, variance, source, accuracy, shown]

    def show(run: LabRun | None, placement: Placement, what: str) -> list:
        if run is None:
            curves = [None, None, None, "Upload a photo or pick a sample above to see the curves.", ""]
        else:
            curves = [view.input_view(run), figures.high_frequency(run.results, shaded=1),
                      figures.variance(run.results, True, shaded=1), what,
                      view.accuracy_markdown(run) if run.accuracy else ""]
        warning = view.weights_banner(placement)
        banner = gr.Markdown(warning, visible=bool(warning))  # no empty orange strip
        return [view.architecture_svg(placement), view.cost_markdown(lab.cost(placement)), banner, *curves,
                (run, placement)]

    def on_export(current: tuple[LabRun | None, Placement] | None) -> str:
        """The tab's Fig 8 and 9 as PNG and SVG and its Fig 11 drawing as SVG, in one ZIP."""
        if not current or current[0] is None:
            raise user_error("Pick a photo or average over the test images first.")
        try:
            data = export.alternet_zip(*current)
        except export.ExportError as exc:
            raise user_error(exc) from None
        path = Path(tempfile.mkdtemp()) / f"alternet-{current[1].tag}.zip"
        path.write_bytes(data)
        return str(path)

    def on_photo(spec: str, photo: str | None) -> list:
        """The placement's drawing and cost, and the three models' curves on the photo."""
        placement = _placement(spec)
        try:
            run = lab.analyze_photo(photo, placement) if photo else None
        except EngineError as exc:
            raise user_error(exc) from None
        what = (f"{view.placement_status(placement)} Curves: your photo, center-cropped and resized to 32×32; "
                "shading: AlterNet's blocks.")
        return show(run, placement, what)

    def on_subset(spec: str, images: float, request: gr.Request, progress: gr.Progress = gr.Progress()) -> list:
        """The curves averaged over the balanced CIFAR-10 test subset, with each model's accuracy."""
        placement = _placement(spec)
        run = lab.analyze_subset(placement, int(images), watched(progress, request))
        what = (f"{view.placement_status(placement)} Curves: mean over {run.images} CIFAR-10 test images "
                "(the first is shown); shading: AlterNet's blocks.")
        return show(run, placement, what)

    inputs = [spec, image]
    # one queue for every update of the panel, so that they land in the order they were asked for
    update = {"concurrency_id": "alternet", "concurrency_limit": 1}
    private = {"api_visibility": "private", "show_progress_on": [drawing], **update}
    step.input(set_step, step, [*grids, spec], api_name="alternet_step").success(
        on_photo, inputs, outputs, api_name="alternet", show_progress_on=[drawing], **update)
    for grid in grids:
        toggled = grid.input(set_grid, grids, [step, spec], api_visibility="private")
        toggled.success(on_photo, inputs, outputs, **private)
    spec.submit(apply_spec, spec, [spec, step, *grids], api_name="alternet_spec").success(
        on_photo, inputs, outputs, **private)
    image.change(on_photo, inputs, outputs, **private)
    export_button.click(on_export, shown, exported, api_name="alternet_export")
    average.click(on_subset, [spec, count], outputs, api_name="alternet_subset", show_progress_on=[source], **update)
    demo.load(on_photo, inputs, outputs, **private)
