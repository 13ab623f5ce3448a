"""ViT explorer in Streamlit: the Gradio explorer's twin, over the same service, views and figures.

    streamlit run app/streamlit_app.py      (or: bash scripts/run.sh --ui streamlit)
"""
from __future__ import annotations

import hashlib
import sys
import tempfile
import threading
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `streamlit run` puts app/ first, not the repo

from app import alternet_view as view  # noqa: E402
from app import explanations as text  # noqa: E402
from app import export, figures  # noqa: E402
from app import paper_findings as findings  # noqa: E402
from app.attention_view import (  # noqa: E402
    COLORMAPS,
    ViewOptions,
    attention_layers,
    head_choices,
    render,
)
from app.cifar_lab import STEPS, step_of  # noqa: E402
from app.service import (  # noqa: E402
    AUTO,
    DEFAULT_MODELS,
    MAX_DATASET_BYTES,
    MAX_DATASET_IMAGES,
    MAX_MODELS,
    SAMPLES,
    WEIGHT_LABELS,
    WEIGHT_MODES,
    ModelRun,
    picked_models,
)
from app.streamlit_resources import board, lab, service  # noqa: E402
from engine.errors import EngineError  # noqa: E402
from engine.findings import FINDINGS  # noqa: E402
from engine.placement import PAPER_DEPTHS, PlacementError, parse  # noqa: E402

st.set_page_config(page_title="ViT explorer", page_icon="🔭", layout="wide")
state = st.session_state
state.setdefault("runs", [])
state.setdefault("spec", str(STEPS[-1]))


def photo() -> tuple[bytes, str] | None:
    """The chosen photo as (bytes, name): an upload, the camera, or a sample."""
    left, right = st.columns([2, 3])
    upload = left.file_uploader("Your photo", type=None, key="upload")
    camera = left.camera_input("Or take one", key="camera") if left.toggle("Camera", key="use_camera") else None
    sample = right.selectbox("Or a sample photo", [p.name for p in SAMPLES], index=0, key="sample")
    if upload is not None:
        return upload.getvalue(), upload.name
    if camera is not None:
        return camera.getvalue(), "camera.jpg"
    return next(p for p in SAMPLES if p.name == sample).read_bytes(), sample


def progress_bar():
    """A progress bar and its report(fraction, message) function, callable from the service's model
    thread (Streamlit draws only from threads that carry the session's script context)."""
    bar, context = st.progress(0.0), get_script_run_ctx()

    def report(fraction: float, message: str) -> None:
        add_script_run_ctx(threading.current_thread(), context)
        bar.progress(min(max(fraction, 0.0), 1.0), message)

    return report


def analyze(picture: tuple[bytes, str], names: list[str], weights: str) -> None:
    """Run every model on the photo, with a progress bar; results go to the session state."""
    with st.status(f"Analyzing {picture[1]}", expanded=True) as status:
        try:
            state.runs = service().analyze(picture[0], names, weights, report=progress_bar())
        except (EngineError, ValueError) as exc:
            status.update(label="Analysis failed", state="error")
            st.error(str(exc))
            return
        state.photo_name = picture[1]
        status.update(label=f"Analyzed {len(state.runs)} models on {picture[1]}", state="complete", expanded=False)


def model_column(i: int, run: ModelRun, colormap: str, opacity: float) -> None:
    """One model: header, top-5, where it looks (with its controls), lesions."""
    result = run.result
    st.markdown(f"### {result.label}\n" + (text.RANDOM_BADGE.format(seed=service().seed) if result.random_weights else result.weights))
    for p in result.predictions[0]:
        st.progress(p.probability, f"{p.label}: {100 * p.probability:.1f}%")
    layers, options = attention_layers(run), ViewOptions()
    if layers:
        layer = st.slider("Layer", 1, max(layers, 2), layers, key=f"layer_{i}")
        head = st.selectbox("Head", head_choices(run), key=f"head_{i}")
        rollout = st.checkbox("Rollout (all layers)", key=f"rollout_{i}") if result.attention.rollout is not None else False
        options = ViewOptions(min(layer, layers), head, rollout)
    image, caption = render(run, options, colormap, opacity)
    st.image(image, caption=caption, width="stretch")
    st.download_button("Map as PNG", export.png(image), f"map-{result.name}.png", "image/png", key=f"map_{i}")
    chosen = st.multiselect("Switch off units (lesion, Fig 10b)", [index for _, index in run.units],
                            default=list(run.lesion), format_func=dict((v, k) for k, v in run.units).get,
                            help=text.LESION, key=f"lesion_{i}")
    if tuple(sorted(chosen)) != run.lesion:
        try:
            state.runs[i] = service().lesioned(run, chosen)
        except EngineError as exc:
            st.error(str(exc))
            return
        st.rerun()


def exports(results) -> None:
    with st.expander("Export for teaching: figures as PNG or SVG, or the whole teaching pack"):
        choices = dict(export.figure_choices(results))  # title -> file stem
        left, middle, right = st.columns(3)
        name = choices[left.selectbox("Figure", list(choices), key="export_figure")]
        fmt = middle.radio("Format", ["png", "svg"], horizontal=True, key="export_format")
        try:
            if right.button("Prepare figure", key="prepare_figure"):
                state.exported = (export.images_of([export.paper_figures(results)[name]], fmt)[0], f"{name}.{fmt}")
            if right.button("Prepare teaching pack (ZIP)", key="prepare_pack"):
                with st.spinner("Rendering every figure"):
                    pack = export.teaching_pack(results, [state.runs], [state.photo_name], service().device_name,
                                                state.get("colormap", "inferno"))
                state.exported = (pack.zip(), "teaching-pack.zip")
        except export.ExportError as exc:
            st.error(str(exc))
        if "exported" in state:
            data, filename = state.exported
            st.download_button(f"Download {filename}", data, filename, key="download_export")


def compare_tab() -> None:
    st.markdown(text.COMPARE)
    runs: list[ModelRun] = state.runs
    if not runs:
        st.info("Pick a photo and models, then **Analyze**.")
        return
    left, right = st.columns(2)
    colormap = left.selectbox("Colormap", COLORMAPS, key="colormap")
    opacity = right.slider("Map opacity", 0.0, 1.0, 0.6, 0.05, key="opacity")
    for i, (column, run) in enumerate(zip(st.columns(len(runs)), runs)):
        with column:
            model_column(i, run, colormap, opacity)
    results = [run.result for run in runs]
    st.markdown(text.FOURIER)
    for column, result in zip(st.columns(len(results)), results):
        column.plotly_chart(figures.fourier_spectrum(result), key=f"spectrum_{result.name}")
    left, right = st.columns(2)
    left.markdown(text.HIGH_FREQUENCY)
    left.plotly_chart(figures.high_frequency(results), key="high_frequency")
    right.markdown(text.VARIANCE)
    log_y = right.checkbox("Log variance axis", True, key="log_y")
    right.plotly_chart(figures.variance(results, log_y), key="variance")
    exports(results)


def dataset_section(names: list[str], weights: str) -> None:
    """Figs 2a, 8 and 9 averaged over a ZIP of images for the picked models, with their export."""
    with st.expander("Dataset curves: Figs 2a, 8 and 9 over a ZIP of images"):
        st.markdown(text.DATASET.format(images=MAX_DATASET_IMAGES, megabytes=MAX_DATASET_BYTES // 2**20))
        archive = st.file_uploader("ZIP of images", type=["zip"], key="dataset_zip")
        if st.button("Measure the ZIP", key="dataset_run", disabled=archive is None):
            with tempfile.NamedTemporaryFile(suffix=".zip") as file:
                file.write(archive.getvalue())
                file.flush()
                try:
                    state.dataset = service().dataset_curves(file.name, names, weights, report=progress_bar())
                except (EngineError, ValueError) as exc:
                    st.error(str(exc).replace(Path(file.name).name, archive.name))
                    return
        results = state.get("dataset")
        if not results:
            return
        st.markdown("Averaged over the ZIP: " + "; ".join(r.label for r in results) + ".")
        left, right = st.columns(2)
        left.plotly_chart(figures.high_frequency(results), key="dataset_high_frequency")
        right.plotly_chart(figures.variance(results, True), key="dataset_variance")
        for column, result in zip(st.columns(len(results)), results):
            column.plotly_chart(figures.fourier_spectrum(result), key=f"dataset_spectrum_{result.name}")
        try:
            if st.button("Export these figures (PNG, SVG, JSON, CSV)", key="dataset_export"):
                state.dataset_exported = export.dataset_zip(results, service().device_name)
        except export.ExportError as exc:
            st.error(str(exc))
        if "dataset_exported" in state:
            st.download_button("Download the dataset figures (ZIP)", state.dataset_exported, "dataset-curves.zip",
                               key="dataset_download")


def set_placement(spec: str) -> None:
    """Make `spec` the AlterNet tab's placement and set the step and the toggles to match."""
    placement = parse(spec, PAPER_DEPTHS)
    state.spec = state.spec_text = str(placement)
    state.step = step_of(placement)
    for s, blocks in enumerate(view.grid_values(placement)):
        state[f"stage_{s}"] = blocks


def on_step() -> None:
    if state.step is not None:
        set_placement(str(STEPS[state.step]))


def on_grid() -> None:
    try:
        set_placement(str(view.from_grid([state[f"stage_{s}"] for s in range(len(PAPER_DEPTHS))])))
    except PlacementError as exc:
        state.placement_error = str(exc)


def on_text() -> None:
    try:
        set_placement(state.spec_text)
    except PlacementError as exc:
        state.placement_error = str(exc)


def alternet_tab(picture: tuple[bytes, str]) -> None:
    st.markdown(text.ALTERNET)
    if "step" not in state:
        set_placement(state.spec)
    left, right = st.columns(2)
    with left:
        st.radio("Build-up step (Fig 12a)", range(len(STEPS)), horizontal=True, key="step", on_change=on_step)
        for s, choices in enumerate(view.grid_choices()):
            st.multiselect(f"Stage {s + 1}: MSA blocks", [b for _, b in choices], key=f"stage_{s}",
                           format_func=lambda b: f"block {b}", on_change=on_grid)
        st.text_input("MSA blocks as text: s<stage>:<block>, 1-based", key="spec_text", on_change=on_text)
        if "placement_error" in state:
            st.error(state.pop("placement_error"))
    right.markdown(view.steps_markdown())
    placement = parse(state.spec, PAPER_DEPTHS)
    st.html(view.architecture_svg(placement))
    st.markdown(view.cost_markdown(lab().cost(placement)))
    banner = view.weights_banner(placement)
    if banner:
        st.warning(banner)
    count = st.slider("Test images to average", 10, 1000, 100, 10, key="subset_count")
    if st.button("Average over CIFAR-10 test images", key="subset"):
        run = lab().analyze_subset(placement, count, progress_bar())
        what = f"mean over {run.images} CIFAR-10 test images (the first is shown)"
    else:
        key = (hashlib.sha1(picture[0]).hexdigest(), str(placement))
        if state.get("lab_key") != key:
            try:
                state.lab_run = lab().analyze_photo(picture[0], placement)
            except EngineError as exc:
                st.error(str(exc))
                return
            state.lab_key = key
        run, what = state.lab_run, f"your photo ({picture[1]}), center-cropped and resized to 32×32"
    st.markdown(f"{view.placement_status(placement)} Curves: {what}; shading: AlterNet's blocks.")
    columns = st.columns([1, 2, 2])
    columns[0].image(view.input_view(run), caption="Input, 32×32")
    columns[1].plotly_chart(figures.high_frequency(run.results, shaded=1), key="alternet_high_frequency")
    columns[2].plotly_chart(figures.variance(run.results, True, shaded=1), key="alternet_variance")
    if run.accuracy:
        st.markdown(view.accuracy_markdown(run))
    try:
        if st.button("Export these figures (PNG, SVG)", key="alternet_export"):
            state.alternet_exported = export.alternet_zip(run, placement)
    except export.ExportError as exc:
        st.error(str(exc))
    if "alternet_exported" in state:
        st.download_button("Download the AlterNet figures (ZIP)", state.alternet_exported,
                           f"alternet-{placement.tag}.zip", key="alternet_download")


def paper_tab(picture: tuple[bytes, str]) -> None:
    """Figs 1a, 1b, 1c/4, 2b, 10a, 10b and 12b: stored results at once, Recompute per analysis."""
    st.markdown(text.FINDINGS_INTRO)
    recomputed = state.setdefault("recomputed", {})
    shown = findings.sections(recomputed)
    for name in findings.ORDER:
        st.markdown(text.FINDINGS[name])
        section = shown[name]
        drawn = findings.figures(name, section)
        for row in range(0, len(drawn), 2):  # heat maps and lesion plots two to a row
            for i, column in zip(range(row, min(row + 2, len(drawn))), st.columns(2) if len(drawn) > 1 else [st]):
                column.plotly_chart(drawn[i], key=f"paper_{name}_{i}")
        st.caption(findings.caption(name, section, recomputed=name in recomputed))
        if name not in FINDINGS:
            continue
        left, right = st.columns([3, 1])
        count = left.slider("Subset images", 10, findings.MAX_IMAGES, FINDINGS[name].images, 10, key=f"paper_{name}_images")
        try:
            if right.button(f"Recompute ({FINDINGS[name].figure})", key=f"paper_{name}_recompute"):
                recomputed[name] = board().recompute(name, count, progress_bar())
                st.rerun()
            if name == "noise" and st.button("Noise on your photo", key="paper_noise_photo"):
                state.photo_noise = board().photo_noise(picture[0], progress_bar())
        except (EngineError, ValueError) as exc:
            st.error(str(exc))
        if name == "noise" and "photo_noise" in state:
            st.plotly_chart(state.photo_noise, key="paper_noise_photo_plot")
    try:
        if st.button("Export these figures (PNG and SVG)", key="paper_export"):
            state.paper_exported = export.figures_zip(findings.for_slides(shown))
    except export.ExportError as exc:
        st.error(str(exc))
    if "paper_exported" in state:
        st.download_button("Download the paper figures (ZIP)", state.paper_exported, "paper-figures.zip",
                           key="paper_download")


st.markdown(text.INTRO)
if not service().online:
    st.warning(text.OFFLINE)
picture = photo()
checked, typed = st.columns([3, 2])
models = checked.multiselect(f"Models (up to {MAX_MODELS})", [name for _, name in service().models()],
                             default=list(DEFAULT_MODELS), max_selections=MAX_MODELS, key="models",
                             format_func=dict((name, label) for label, name in service().models()).get)
models = picked_models(models, typed.text_input("Any timm model", placeholder="e.g. convnext_atto, mobilevit_xxs",
                                                help=text.ANY_TIMM, key="typed_models"))
weights = st.radio("Weights", WEIGHT_MODES, format_func=WEIGHT_LABELS.get, index=WEIGHT_MODES.index(AUTO),
                   horizontal=True, help=text.WEIGHTS, key="weights")
if st.button("Analyze", type="primary", key="analyze"):
    analyze(picture, models, weights)
compare, alternet, paper = st.tabs(["Compare models", "AlterNet (Section 4)", "Paper figures"])
with compare:
    compare_tab()
    dataset_section(models, weights)
with alternet:
    alternet_tab(picture)
with paper:
    paper_tab(picture)
