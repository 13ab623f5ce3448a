"""ViT explorer in Streamlit: the Gradio explorer's twin, laid out over the same tab logic (app.tabs).

    streamlit run app/streamlit_server.py      (or: bash scripts/run.sh --ui streamlit)

(app/streamlit_server.py serves this page behind the server's limits; `streamlit run` on this file serves it
without them, as AppTest runs it.)

Results live in st.session_state; re-draws from them (layer, head, rollout, colours) run as fragments,
without the rest of the page and without a forward pass.
"""

from __future__ import annotations

import hashlib
import operator
import sys
import tempfile
import threading
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import streamlit as st
from PIL import Image
from streamlit import runtime
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `streamlit run` puts app/ first, not the repo

from app.export import png  # noqa: E402
from app.guard import VISITOR, UploadLimits, refuse  # noqa: E402
from app.logs import configure as configure_logging  # noqa: E402
from app.paper_findings import MAX_IMAGES  # noqa: E402
from app.service import (  # noqa: E402
    AUTO,
    IG_DEFAULT_STEPS,
    MAX_MODELS,
    SAMPLES,
    WEIGHT_LABELS,
    WEIGHT_MODES,
    default_models,
    picked_models,
)
from app.streamlit_ui.resources import board, lab, service  # noqa: E402
from app.streamlit_ui.serving import CLOSED, refused_upload  # noqa: E402
from app.tabs import Download, Problem  # noqa: E402
from app.tabs.alternet import (  # noqa: E402
    PAPER_STEP,
    STEPS,
    SUBSET_DEFAULT,
    SUBSET_MAX,
    SUBSET_MIN,
    AlterNetTab,
    AlterNetView,
    Builder,
)
from app.tabs.compare import (  # noqa: E402
    DEFAULT_FIGURE,
    Column,
    CompareTab,
    Look,
    Page,
    attention_controls,
    column_key,
    not_an_image,
)
from app.tabs.dataset import EXPLANATION, DatasetTab  # noqa: E402
from app.tabs.paper import NOISE, PaperTab  # noqa: E402
from app.tabs.tour import KEYS as TOUR_KEYS  # noqa: E402
from app.tabs.tour import TourTab  # noqa: E402
from app.tabs.tour import index_of as tour_index  # noqa: E402
from app.views import alternet as view  # noqa: E402
from app.views import texts as text  # noqa: E402
from app.views.attention import COLORMAPS, MEAN, ViewOptions  # noqa: E402
from app.views.texts import LABEL, literal  # noqa: E402
from engine import errors  # noqa: E402
from engine.models.placement import PAPER_DEPTHS  # noqa: E402

configure_logging()  # the server log laid out as Gradio's
st.set_page_config(page_title="ViT explorer", page_icon="🔭", layout="wide")
state = st.session_state
state.setdefault("runs", [])
# whose turn this session's model work takes: its visitor (served by app/streamlit_server.py, the address behind
# the trusted proxies only); a session seen now is not closed (app/streamlit_ui/serving.Closed)
VISITOR.set(st.context.ip_address or "local")
SESSION = run_context.session_id if (run_context := get_script_run_ctx()) is not None else ""
CLOSED.seen(SESSION)
compare, dataset, alternet, paper = CompareTab(service()), DatasetTab(service()), AlterNetTab(lab()), PaperTab(board())
tour = TourTab(service())
PREVIEW_WIDTH = 240  # pixels: the photo's preview, made once per photo (st.image would resize a wider one each rerun)


def photo() -> tuple[bytes, str]:
    """The chosen photo as (bytes, name): an upload, the camera, or a sample; shown as it will be analyzed
    (the sample box is set aside while an upload or the camera's photo is in use), or named as unreadable."""
    left, right = st.columns([2, 3])
    upload = left.file_uploader(LABEL.photo, type=None, key="upload", help=upload_limits())
    if refused := refused_upload(SESSION):
        left.error(f"{LABEL.upload_refused}: {refused}.")
    camera = left.camera_input("Or take one", key="camera") if left.toggle("Camera", key="use_camera") else None
    own = upload if upload is not None else camera
    sample = right.selectbox(LABEL.sample, [p.name for p in SAMPLES], index=0, key="sample", disabled=own is not None)
    if own is not None:
        picture = own.getvalue(), upload.name if upload is not None else "camera.jpg"
        right.caption(f"Using **{literal(picture[1])}**; remove it to use a sample photo.")
    else:
        picture = next(p for p in SAMPLES if p.name == sample).read_bytes(), sample
    problem, preview = checked_photo(picture)
    if problem:
        right.error(problem)
    else:
        right.image(preview, caption=literal(picture[1]), width=PREVIEW_WIDTH)
    return picture


def upload_limits() -> str:
    """The uploader's help: the limits a refused upload passed, in numbers."""
    minute_mb = UploadLimits().per_minute / 2**20
    return text.UPLOAD_LIMITS.format(file_mb=st.get_option("server.maxUploadSize"), minute_mb=f"{minute_mb:.0f}")


def unreadable(picture: tuple[bytes, str]) -> str | None:
    """Why the photo cannot be analyzed (None: it can); see checked_photo."""
    return checked_photo(picture)[0]


def checked_photo(picture: tuple[bytes, str]) -> tuple[str | None, Image.Image | None]:
    """Why the photo cannot be analyzed (None: it can) and, when it can, its preview, decoded and refused (one log
    line) once per photo and session, however often the page reruns."""
    checked = state.setdefault("photo_checked", {})
    found = digest(picture[0])
    if found not in checked:
        checked.clear()
        checked[found] = decoded(picture)
        if checked[found][0]:
            refuse(checked[found][0], "a photo Streamlit could not read")
    return checked[found]


def decoded(picture: tuple[bytes, str]) -> tuple[str | None, Image.Image | None]:
    """The photo's problem, or its preview as the engine decodes it for analysis (16-bit, 32-bit and float images
    made 8-bit RGB: st.image cannot encode those modes), PREVIEW_WIDTH pixels wide at most."""
    name = errors.shown(picture[1])
    try:  # within the server's pixel budget, as the analysis decodes it
        preview = service().picture(picture[0], name)
    except errors.ImageError as exc:  # the engine's line, naming the file (too large, truncated, ...)
        return str(exc), None
    except (errors.EngineError, ValueError, OSError):
        return not_an_image(name), None
    preview.thumbnail((PREVIEW_WIDTH, preview.height))
    return None, preview


def progress_bar(stop: str | None = None, asked_by: tuple[str, ...] = ()):
    """A progress bar and its report(fraction, message) function, callable from the service's model
    thread (Streamlit draws only from threads that carry the session's script context). With `stop`, the
    key of a Stop button, the work stops at its next report once that button is clicked, one of the widgets
    keyed `asked_by` (those that chose the work) is changed, or the session ends; any other change (the map's
    opacity, a colour) waits for the work instead of restarting it."""
    bar, context = st.progress(0.0), get_script_run_ctx()

    def report(fraction: float, message: str) -> None:
        if stop and (stop_asked(context, stop) or changed(context, asked_by)):
            raise refuse("stopped: the page asked for something else", "work stopped by its user")
        add_script_run_ctx(threading.current_thread(), context)
        bar.progress(min(max(fraction, 0.0), 1.0), message)

    return report


def stop_asked(context, button: str) -> bool:
    """Whether the session has ended, or asked for a run that is a click on the button keyed `button`, since
    `context`'s run began (Streamlit keeps the request, with the widgets' states, until the script reaches
    its next element, which a model call holds up). A full rerun (another opacity, a colour) stops this run
    while its session lives on (Streamlit's fast reruns): the work goes on, and the new run takes its result."""
    requests = getattr(context, "script_requests", None)
    asked = getattr(requests, "_state", ScriptRequestType.CONTINUE)
    if asked == ScriptRequestType.STOP:
        return not (runtime.exists() and runtime.get_instance().is_active_session(context.session_id))
    widgets = getattr(getattr(getattr(requests, "_rerun_data", None), "widget_states", None), "widgets", [])
    clicked = (w for w in widgets if w.WhichOneof("value") == "trigger_value" and w.trigger_value)
    return asked == ScriptRequestType.RERUN and any(w.id.endswith(f"-{button}") for w in clicked)


def changed(context, keys: tuple[str, ...]) -> bool:
    """Whether the run the session asked for (see stop_asked) gives a widget keyed one of `keys` another value
    than the run in progress has."""
    requests = getattr(context, "script_requests", None)
    if not keys or getattr(requests, "_state", None) != ScriptRequestType.RERUN:
        return False
    now = {w.id: w for w in context.session_state.get_widget_states()}
    asked = getattr(getattr(getattr(requests, "_rerun_data", None), "widget_states", None), "widgets", [])
    mine = (w for w in asked if w.id in now and any(w.id.endswith(f"-{key}") for key in keys))
    return any(w != now[w.id] for w in mine)


def offer(download: Download | None, key: str) -> None:
    if download is not None:
        st.download_button(f"Download {download.filename}", download.data, download.filename, key=key)


def export_button(label: str, name: str, make: Callable[[], Download], where=st, busy: str | None = None) -> None:
    """A button that prepares `name`'s download with `make` (a problem shown as such), then the download."""
    try:
        if where.button(label, key=f"{name}_export"):
            with st.spinner(busy or "Rendering"):
                state[f"{name}_exported"] = make()
    except Problem as exc:
        st.error(str(exc))
    offer(state.get(f"{name}_exported"), f"{name}_download")


def key(kind: str, i: int) -> str:
    """The key of column `i`'s control `kind`: it belongs to the model's run, so a new Analyze gives every
    column its own model's defaults (method, class, layer, head, lesion) whatever the column showed before."""
    return column_key(kind, i, state.runs[i], state.get("analysis", 0))


def look() -> Look:
    shaded = state.get(f"shaded_{state.get('analysis', 0)}", 0)
    return Look(
        state.get("colormap", "inferno"),
        state.get("opacity", 0.6),
        state.get("log_y", True),
        shaded if isinstance(shaded, int) and shaded < len(state.runs) else 0,
    )


def analyze(picture: tuple[bytes, str], names: list[str], typed: str, weights: str) -> None:
    """Run every model on the photo, with a progress bar; results go to the session state under a new
    analysis number, which keys the columns' controls afresh, and the previous exports are dropped. The
    results are stored before anything more is drawn: a rerun that interrupts this one (an upload ending)
    then keeps them. Asked again for the results on screen (a double click), it re-runs nothing: the columns
    start afresh from the intact models."""
    if problem := unreadable(picture):
        st.error(problem)
        return
    asked = (digest(picture[0]), tuple(picked_models(names, typed)), weights)
    if state.runs and state.get("analyzed") == asked:
        state.runs, state.analysis = [run.original or run for run in state.runs], state.analysis + 1
        state.pop("exported", None)
        return
    with st.status(f"Analyzing {picture[1]}", expanded=True) as status:
        try:
            page = compare.analyze(picture[0], names, typed, weights, look(), report=progress_bar())
        except Problem as exc:
            status.update(label=f"Analysis failed: {exc}", state="error", expanded=True)
            st.error(str(exc))
            return
        state.pop("exported", None)
        state.analysis, state.analyzed = state.get("analysis", 0) + 1, asked
        state.runs, state.photo_name, state.photo_digest = page.runs, picture[1], digest(picture[0])
        status.update(label=f"{page.status[:-1]} on {picture[1]}.", state="complete", expanded=False)


def view_options(i: int, column: Column) -> ViewOptions:
    """Column `i`'s map as its controls stand: method, class, and for the attention its layer, head and
    rollout (before any change: the first method, top-1 class, last layer, head mean)."""
    method = state.get(key("method", i), column.methods[0])
    method = method if method in column.methods else column.methods[0]
    target = state.get(key("target", i), column.classes[0][1])
    steps = state.get("ig_steps", IG_DEFAULT_STEPS)
    if not column.layers:
        return ViewOptions(None, MEAN, False, method, target, steps)
    layer = min(state.get(key("layer", i), column.layers), column.layers)
    rollout = bool(state.get(key("rollout", i), False)) and column.rollout
    return ViewOptions(layer, state.get(key("head", i), MEAN), rollout, method, target, steps)


def views(page: Page) -> list[ViewOptions]:
    return [view_options(i, column) for i, column in enumerate(page.columns)]


@st.fragment
def where_it_looks(i: int, column: Column) -> None:
    """One model's map with its layer, head and rollout controls: re-drawn alone, from stored results
    (`column`, from the page's last full run, gives the controls' ranges)."""
    run = state.runs[i]
    left, right = st.columns(2)
    method = left.selectbox(LABEL.method, column.methods, key=key("method", i), help=text.METHODS)
    labels = dict((index, label) for label, index in column.classes)
    right.selectbox(LABEL.target, list(labels), key=key("target", i), format_func=labels.get)
    if column.not_offered:
        st.caption(f"Not offered for this model: {column.not_offered}")
    if column.layers:
        rollout = bool(state.get(key("rollout", i), False)) and column.rollout
        layer, head, rollout_applies = attention_controls(rollout, method)
        last = max(column.layers, 2)
        st.slider(LABEL.layer, 1, last, column.layers, key=key("layer", i), disabled=not layer)
        if column.rollout:
            st.checkbox(LABEL.rollout, key=key("rollout", i), disabled=not rollout_applies)
        st.selectbox(LABEL.head, column.heads, key=key("head", i), disabled=not head)
    options = view_options(i, column)
    stopped, shown, done = key("stopped", i), options.key(run), options.computed(run)
    if not done and state.get(stopped) == shown:
        drawn_for, drawn = state.get(f"drawn_{i}", (None, None))  # the map shown before, kept as in Gradio
        previous = drawn if drawn_for == key("drawn", i) and drawn.computed(run) else None
        st.info(LABEL.map_stopped if previous is None else f"{LABEL.map_stopped} {text.MAP_STOPPED}")
        if not st.button(LABEL.compute_map, key=key("compute", i)):
            if previous is not None:
                show_map(i, column, *compare.view(run, previous, look()))
            return
    state.pop(stopped, None)
    stop, report = st.empty(), None
    if not done:
        stop.button(LABEL.stop_map, key=key("stop", i), on_click=state.__setitem__, args=(stopped, shown))
        chosen_by = [key(kind, i) for kind in ("method", "target", "layer", "head", "rollout")]
        report = progress_bar(key("stop", i), (*chosen_by, *(["ig_steps"] if options.uses_steps(run) else [])))
    try:
        image, caption = compare.view(run, options, look(), report)
    except Problem as exc:
        st.error(str(exc))
        return
    finally:
        stop.empty()
    state[f"drawn_{i}"] = (key("drawn", i), options)  # one per column: nothing of older analyses is held
    show_map(i, column, image, caption)


def show_map(i: int, column: Column, image: np.ndarray, caption: str) -> None:
    """Model `i`'s map with its caption and a PNG download."""
    st.image(image, caption=f"{column.map_title}: {caption}", width="stretch")
    encoded = partial(png, image)  # made when clicked, not on each rerun of the page
    st.download_button(LABEL.map_png, encoded, f"map-{state.runs[i].result.name}.png", "image/png", key=key("map", i))


def model_column(i: int, column: Column) -> None:
    """One model: header, top-5, where it looks (a fragment), lesions."""
    run = state.runs[i]
    st.markdown(column.title)
    st.caption(column.top5_title)
    for label, probability in column.top5.items():
        st.progress(probability, label if column.random else f"{label}: {100 * probability:.1f}%")
    where_it_looks(i, column)
    if column.distance:
        st.caption(column.distance)
    chosen = st.multiselect(
        LABEL.lesion,
        [index for _, index in column.units],
        default=column.lesion,
        format_func=dict((v, k) for k, v in column.units).get,
        help=text.LESION,
        key=key("lesion", i),
        select_all=False,  # each change re-runs the model: units go off one by one, as in Gradio
    )
    if tuple(sorted(chosen)) != run.lesion:
        try:
            state.runs = compare.lesion(state.runs, i, chosen, look()).runs
            state.pop(key("target", i), None)  # the lesioned model's own top-1 is explained next
        except Problem as exc:
            st.error(str(exc))
            return
        st.rerun()


def exports(page: Page) -> None:
    with st.expander(LABEL.exports, key="exports_open"):  # keyed: it stays open over the reruns its buttons make
        choices = {title: name for title, name in page.figure_choices}
        first = list(choices.values()).index(DEFAULT_FIGURE) if DEFAULT_FIGURE in choices.values() else 0
        left, middle, right = st.columns(3)
        picked = left.selectbox(LABEL.export_figure_name, list(choices), first, key=f"export_figure_{state.analysis}")
        name = choices[picked]
        fmt = middle.radio(LABEL.export_format, ["png", "svg"], horizontal=True, key="export_format")
        try:
            if right.button(LABEL.export_figure, key="prepare_figure"):
                state.exported = compare.export_figure(state.runs, name, fmt, look(), state.photo_name)
            if right.button(LABEL.export_pack, key="prepare_pack"):
                with st.spinner("Rendering every figure"):
                    state.exported = compare.export_pack(state.runs, state.photo_name, look(), views(page))
        except Problem as exc:
            st.error(str(exc))
        offer(state.get("exported"), "download_export")


def digest(photo: bytes) -> str:
    return hashlib.sha1(photo).hexdigest()


def compare_page() -> Page:
    """The Compare tab's page for the session's runs, made again only when the runs or the plots' options
    change. Its maps keep the colours they were made with: the columns draw their own (`where_it_looks`), so
    another opacity or colour map re-uses the page (0.3 s of plotly figures a rerun)."""
    plots = (look().log_y, look().shaded)
    made, page = state.get("compare_page", (None, None))
    if made == plots and len(page.runs) == len(state.runs) and all(map(operator.is_, page.runs, state.runs)):
        return page
    page = compare.page(state.runs, look())
    state.compare_page = (plots, page)
    return page


def compare_tab(photo_digest: str) -> None:
    st.markdown(text.COMPARE)
    if not state.runs:
        st.info(LABEL.ready)
        return
    if state.get("photo_digest") != photo_digest:
        st.info(LABEL.stale.format(previous=f"**{state.photo_name}**"))
    left, right = st.columns(2)
    left.selectbox(LABEL.colormap, COLORMAPS, key="colormap")
    right.slider(LABEL.opacity, 0.0, 1.0, 0.6, 0.05, key="opacity")
    st.slider(LABEL.ig_steps, 8, 128, IG_DEFAULT_STEPS, 8, key="ig_steps")
    page = compare_page()
    for i, (place, column) in enumerate(zip(st.columns(len(page.columns)), page.columns)):
        with place:
            model_column(i, column)
    st.markdown(text.FOURIER)
    for column, shown in zip(st.columns(len(page.columns)), page.columns):
        column.plotly_chart(shown.spectrum, theme=None, key=f"spectrum_{shown.title}")
    left, right = st.columns(2)
    left.markdown(text.HIGH_FREQUENCY)
    left.plotly_chart(page.high_frequency, theme=None, key="high_frequency")
    left.markdown(page.high_frequency_here)
    right.markdown(text.VARIANCE)
    right.plotly_chart(page.variance, theme=None, key="variance")
    right.markdown(page.variance_here)
    right.checkbox(LABEL.log_y, True, key="log_y")
    right.selectbox(
        LABEL.shaded,
        range(len(page.columns)),
        format_func=lambda i: (page.runs[i].original or page.runs[i]).result.label,
        key=f"shaded_{state.get('analysis', 0)}",
    )
    st.markdown(text.LENS)
    st.plotly_chart(page.lens, theme=None, key="logit_lens")
    st.markdown(page.lens_here)
    exports(page)


def dataset_section(names: list[str], typed: str, weights: str) -> None:
    """Figs 2a, 8 and 9 averaged over a ZIP of images for the picked models, with their export."""
    with st.expander(LABEL.dataset):
        st.markdown(EXPLANATION)
        archive = st.file_uploader(LABEL.dataset_zip, type=["zip"], key="dataset_zip")
        if st.button(LABEL.dataset_run, key="dataset_run", disabled=archive is None):
            with tempfile.NamedTemporaryFile(suffix=".zip") as file:
                file.write(archive.getvalue())
                file.flush()
                try:
                    state.dataset = dataset.measure(file.name, names, typed, weights, progress_bar(), archive.name)
                    state.pop("dataset_exported", None)
                except Problem as exc:
                    st.error(str(exc))
                    return
        shown = state.get("dataset")
        if shown is None:
            return
        st.markdown(shown.summary)
        left, right = st.columns(2)
        left.plotly_chart(shown.high_frequency, theme=None, key="dataset_high_frequency")
        right.plotly_chart(shown.variance, theme=None, key="dataset_variance")
        for column, result, spectrum in zip(st.columns(len(shown.results)), shown.results, shown.spectra):
            column.plotly_chart(spectrum, theme=None, key=f"dataset_spectrum_{result.name}")
        export_button(LABEL.dataset_export, "dataset", lambda: dataset.export(shown))


def show_builder(built: Builder) -> None:
    """Set the step, the toggles and the text to a Builder's values."""
    state.spec = state.spec_text = built.spec
    state.step = built.step
    for s, blocks in enumerate(built.grid):
        state[f"stage_{s}"] = blocks


def on_builder(make: Callable[[], Builder]) -> None:
    """Apply a builder control's change to the other two; a bad one is named under the controls."""
    try:
        show_builder(make())
    except Problem as exc:
        state.placement_error = str(exc)


def on_step() -> None:
    if state.step is not None:  # None: a custom placement, set by the toggles or the text
        on_builder(lambda: alternet.from_step(state.step))


def on_grid() -> None:
    on_builder(lambda: alternet.from_grid([state[f"stage_{s}"] for s in range(len(PAPER_DEPTHS))]))


def on_text() -> None:
    """A typed placement applied; a bad one's problem is kept beside the text, shown while the box holds it."""
    try:
        show_builder(alternet.from_text(state.spec_text))
    except Problem as exc:
        state.spec_problem = (state.spec_text, str(exc))


NOT_A_PLACEMENT = "the MSA blocks typed as text are not a placement ({problem}); what is shown is the last good one."


def spec_problem() -> str | None:
    """The problem of the text in the spec box (None: it is the placement shown, or no text was typed)."""
    typed, why = state.get("spec_problem", (None, None))
    return why if typed == state.get("spec_text") else None


def alternet_tab(picture: tuple[bytes, str], photo_digest: str) -> None:
    st.markdown(text.ALTERNET)
    if "step" not in state:
        show_builder(alternet.from_step(PAPER_STEP))
    left, right, bad = *st.columns(2), spec_problem()
    with left:
        st.radio(LABEL.step, range(len(STEPS)), horizontal=True, key="step", on_change=on_step)
        for s, choices in enumerate(view.grid_choices()):
            st.multiselect(
                LABEL.stage.format(stage=s + 1),
                [b for _, b in choices],
                key=f"stage_{s}",
                format_func=lambda b: f"block {b}",
                on_change=on_grid,
            )
        st.text_input(LABEL.spec, key="spec_text", on_change=on_text)
        if "placement_error" in state:
            st.error(state.pop("placement_error"))
        elif bad:
            st.error(bad)
    right.container(key="alternet_steps").markdown(view.steps_markdown())  # scrolls in its box (STYLE)
    count = st.slider(LABEL.subset_count, SUBSET_MIN, SUBSET_MAX, SUBSET_DEFAULT, 10, key="subset_count")
    key = (photo_digest, state.spec)
    try:
        if st.button(LABEL.subset, key="subset"):
            if bad:  # the last good placement's results stay, said so
                st.error(f"Not averaged: {NOT_A_PLACEMENT.format(problem=bad)}")
            else:
                state.alternet_view, state.alternet_key = alternet.on_subset(state.spec, count, progress_bar()), key
        elif state.get("alternet_key") != key:  # a new photo or placement: the photo's curves
            if problem := unreadable(picture):  # refused (and logged) once already
                raise Problem(problem)
            state.alternet_view, state.alternet_key = alternet.on_photo(state.spec, *picture), key
    except Problem as exc:
        st.error(str(exc))
        return
    shown = state.alternet_view
    st.markdown(shown.drawing, unsafe_allow_html=True)
    st.markdown(shown.cost)
    if shown.banner:
        st.warning(shown.banner)
    st.markdown(shown.source)
    columns = st.columns([1, 2, 2])
    columns[0].image(shown.seen, caption=LABEL.seen)
    columns[1].plotly_chart(shown.high_frequency, theme=None, key="alternet_high_frequency")
    columns[2].plotly_chart(shown.variance, theme=None, key="alternet_variance")
    if shown.accuracy:
        st.markdown(shown.accuracy)
    st.markdown(shown.here)
    export_button(LABEL.alternet_export, "alternet", lambda: exported_alternet(shown, bad))


def exported_alternet(shown: AlterNetView, bad: str | None) -> Download:
    """The AlterNet tab's export, refused while the spec box holds a bad placement."""
    if bad:
        raise Problem(f"Not exported: {NOT_A_PLACEMENT.format(problem=bad)}")
    return alternet.export(shown)


def move(delta: int) -> None:
    """Back or next in the tour (the address follows: `linked`)."""
    state.tour_step = min(max(state.tour_step + delta, 0), len(TOUR_KEYS) - 1)


def linked(on_tour: bool) -> None:
    """The page's address names the tour's step while the tour is shown (a link a teacher can copy), and no step
    once another tab is (a reload then opens the Compare tab)."""
    if on_tour:
        st.query_params["step"] = TOUR_KEYS[state.tour_step]
    elif "step" in st.query_params:
        del st.query_params["step"]


def tour_tab() -> None:
    """The guided tour over the Compare tab's runs: one step, back and next, the whole tour as a handout."""
    st.markdown(text.TOUR_INTRO)
    if "tour_step" not in state:
        state.tour_step = tour_index(st.query_params.get("step"))
    step = tour.step(state.get("runs", []), state.tour_step + 1, look())
    st.progress(step.number / len(TOUR_KEYS), step.position)
    st.markdown(f"#### {step.title}\n**The paper:** {step.statement}")
    if step.image is not None:
        st.image(step.image)
    if step.figure is not None:
        st.plotly_chart(step.figure, theme=None, key=f"tour_plot_{step.key}")
    st.markdown(step.verdict.text)
    st.markdown(f"**Try this:** {step.try_this}")
    back, ahead, export = st.columns(3)
    back.button("← Back", key="tour_back", disabled=step.number == 1, on_click=move, args=(-1,))
    ahead.button("Next →", key="tour_next", disabled=step.number == len(TOUR_KEYS), on_click=move, args=(1,))
    export_button(
        "Export this tour (handout)",
        "tour",
        lambda: tour.export(state.get("runs", []), look(), state.get("photo_name", "")),
        where=export,
        busy="Rendering every step",
    )


def paper_tab(picture: tuple[bytes, str]) -> None:
    """Figs 1a, 1b, 1c/4, 2b, 10a, 10b and 12b: stored results at once, Recompute per analysis."""
    st.markdown(paper.intro)
    recomputed = state.setdefault("recomputed", {})
    for section in paper.sections(recomputed):
        name, drawn = section.name, section.figures
        st.markdown(section.explanation)
        for row in range(0, len(drawn), 2):  # heat maps and lesion plots two to a row
            for i, column in zip(range(row, min(row + 2, len(drawn))), st.columns(2) if len(drawn) > 1 else [st]):
                column.plotly_chart(drawn[i], theme=None, key=f"paper_{name}_{i}")
        st.caption(section.caption)
        if section.recompute is None:
            continue
        left, right = st.columns([3, 1])
        count = left.slider(LABEL.paper_images, 10, MAX_IMAGES, section.images, 10, key=f"paper_{name}_images")
        try:
            if right.button(section.recompute, key=f"paper_{name}_recompute"):
                state.recomputed, _ = paper.recompute(recomputed, name, count, progress_bar())
                st.rerun()
            if name == NOISE and st.button(LABEL.photo_noise, key="paper_noise_photo"):
                state.photo_noise = paper.photo_noise(picture[0], progress_bar())
        except Problem as exc:
            st.error(str(exc))
        if name == NOISE and "photo_noise" in state:
            st.plotly_chart(state.photo_noise, theme=None, key="paper_noise_photo_plot")
    export_button(LABEL.paper_export, "paper", lambda: paper.export(recomputed))


STYLE = """<style>
.st-key-alternet_steps table {display: block; overflow-x: auto}
.st-key-alternet_steps td:last-child {white-space: nowrap}
</style>"""  # as Gradio's #alternet-steps: at phone width the build-up table scrolls sideways, not the page
st.html(STYLE)
st.markdown(text.INTRO)
if not service().online:
    st.warning(text.OFFLINE)
picture = photo()
photo_digest = digest(picture[0])  # once per rerun: which photo the results are for
checked, typed = st.columns([3, 2])
labels = dict((name, label) for label, name in service().models())
models = checked.multiselect(
    LABEL.models.format(count=MAX_MODELS),
    list(labels),
    default=list(default_models(service().online)),
    max_selections=MAX_MODELS,
    select_all=False,  # its bulk action would pass the limit
    key="models",
    format_func=labels.get,
)
typed_models = typed.text_input(
    LABEL.typed_models, placeholder=LABEL.typed_placeholder, help=text.ANY_TIMM, key="typed_models"
)
weights = st.radio(
    LABEL.weights,
    WEIGHT_MODES,
    format_func=WEIGHT_LABELS.get,
    index=WEIGHT_MODES.index(AUTO),
    horizontal=True,
    help=text.WEIGHTS,
    key="weights",
)
if st.button(LABEL.analyze, type="primary", key="analyze"):
    analyze(picture, models, typed_models, weights)
TABS = ["Compare models", "AlterNet (Section 4)", "Paper figures", "Guided tour"]
# A deep link into the tour (?step=3 or ?step=variance) opens the session on the tour; from then on the tab shown
# is the one last clicked, whatever the address says (the tour's Back and Next keep it in step with the page).
opening = state.setdefault("opening_tab", TABS[3] if st.query_params.get("step") else TABS[0])
compare_section, alternet_section, paper_section, tour_section = st.tabs(
    TABS, default=opening, key="tab", on_change="rerun"
)
with compare_section:
    compare_tab(photo_digest)
    dataset_section(models, typed_models, weights)
with alternet_section:
    alternet_tab(picture, photo_digest)
with paper_section:
    paper_tab(picture)
with tour_section:
    tour_tab()
linked(bool(tour_section.open))
