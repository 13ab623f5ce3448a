"""The Compare tab in Streamlit: Analyze, one column per model (header, top-5, where it looks as a fragment,
lesions), Fig 2a, Figs 8 and 9, the logit lens, the exports and the dataset curves, over app.tabs.compare."""

from __future__ import annotations

import operator
from functools import partial

import numpy as np
import streamlit as st

from app.backend.service import IG_DEFAULT_STEPS, ModelRun, picked_models
from app.exports.export import png
from app.streamlit_ui.downloads import offer
from app.streamlit_ui.photo import digest, unreadable
from app.streamlit_ui.progress import progress_bar
from app.streamlit_ui.resources import service
from app.tabs import Problem
from app.tabs.column_maps import Asked, StoppedMaps, analyzes, stopped_line
from app.tabs.compare import (
    DEFAULT_FIGURE,
    Column,
    CompareTab,
    Look,
    Page,
    attention_controls,
    column_key,
    photo_line,
)
from app.views import alt_text
from app.views import texts as text
from app.views.attention import COLORMAPS, ViewOptions
from app.views.texts import LABEL

state = st.session_state


def tab() -> CompareTab:
    return CompareTab(service())


def key(kind: str, i: int) -> str:
    """The key of column `i`'s control `kind`: it belongs to the model's run, so a new Analyze gives every
    column its own model's defaults (method, class, layer, head, lesion) whatever the column showed before."""
    return column_key(kind, i, state.runs[i], state.get("analysis", 0))


def look() -> Look:
    return Look(  # the shaded model: as chosen, else the page model's default (Look.shaded_in)
        state.get("colormap", "inferno"),
        state.get("opacity", 0.6),
        state.get("log_y", True),
        state.get(f"shaded_{state.get('analysis', 0)}"),
    )


def analyze(picture: tuple[bytes, str], names: list[str], typed: str, weights: str) -> None:
    """Run every model on the photo, with a progress bar; results go to the session state under a new
    analysis number, which keys the columns' controls afresh, and the previous exports are dropped. The
    results are stored before anything more is drawn: a rerun that interrupts this one (an upload ending, a
    second click) then keeps them, and the Analyze is under way until its run ends. A second Analyze asking for
    the one under way re-runs nothing: its stored results fill the page (column_maps.analyzes)."""
    if problem := unreadable(picture):
        st.error(problem)
        return
    asked = Asked(digest(picture[0]), tuple(picked_models(names, typed)), weights)
    under_way = state.pop("under_way", None)  # cut short by this run's rerun
    if state.runs and state.get("analyzed") == under_way and not analyzes(asked, under_way):
        return
    state.under_way = asked
    with st.status(f"Analyzing {picture[1]}", expanded=True) as status:
        try:
            page = tab().analyze(picture[0], names, typed, weights, look(), progress_bar(), picture[1])
        except Problem as exc:
            status.update(label=f"Analysis failed: {exc}", state="error", expanded=True)
            st.error(str(exc))
            return
        state.pop("exported", None)
        state.analysis, state.analyzed = state.get("analysis", 0) + 1, asked
        state.runs, state.photo_name, state.photo_digest = page.runs, picture[1], digest(picture[0])
        state.compare_page = ((look().log_y, page.shaded), page)  # drawn below as it is, not made again
        status.update(label=page.status, state="complete", expanded=False)
    state.pop("under_way", None)


def view_options(i: int, column: Column) -> ViewOptions:
    """Column `i`'s map as its controls stand (Column.chosen: the column's default for a control not set)."""
    chosen = [state.get(key(kind, i)) for kind in ("method", "target", "layer", "head")]
    return column.chosen(*chosen, state.get(key("rollout", i), False), state.get("ig_steps", IG_DEFAULT_STEPS))


def stops() -> StoppedMaps:
    return state.setdefault("stopped_maps", StoppedMaps())


def views(page: Page) -> list[ViewOptions]:
    return [view_options(i, column) for i, column in enumerate(page.columns)]


@st.fragment
def where_it_looks(i: int, column: Column) -> None:
    """One model's map above its controls (method, class, and for the attention its layer, rollout and head), as
    in Gradio: re-drawn alone, from stored results (`column`, from the page's last full run, gives the controls'
    ranges)."""
    picture = st.container()  # filled once the controls below have said which map
    if state.get(key("target", i)) not in (None, view_options(i, column).target):
        del state[key("target", i)]  # a class no longer among the top-5 (a lesion): the top-1's, as the map shows
    method = st.selectbox(LABEL.method, column.methods, key=key("method", i), help=text.METHODS)
    labels = dict((index, label) for label, index in column.classes)
    st.selectbox(LABEL.target, list(labels), key=key("target", i), format_func=labels.get)
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
    with picture:
        draw_map(i, column, view_options(i, column))


MAP_CONTROLS = ("method", "target", "layer", "head", "rollout")  # a column's widgets that choose its map


def draw_map(i: int, column: Column, options: ViewOptions) -> None:
    """Column `i`'s map as `options` ask, computed with a Stop and progress where it is not yet (both go once it
    is drawn); after a Stop, the map shown before, the stopped line and "Compute this map"."""
    run, maps, run_key = state.runs[i], stops(), key("drawn", i)
    asked, done = options.key(run), options.computed(run)
    if not done and maps.is_stopped(i, run_key, asked):
        previous = maps.previous(i, run_key, run)  # the map shown before, kept as in Gradio
        before, offer = st.empty(), st.empty()
        with offer.container():
            st.info(stopped_line(previous is not None))
            computing = st.button(LABEL.compute_map, key=key("compute", i))
        if not computing:
            if previous is not None:
                with before.container():
                    show_map(i, column, *tab().view(run, previous, look()))
            return
        offer.empty()
    maps.compute(i)
    working, report = st.empty(), None
    if not done:
        with working.container():
            st.button(LABEL.stop_map, key=key("stop", i), on_click=maps.stop, args=(i, run_key, asked))
            chosen_by = [key(kind, i) for kind in MAP_CONTROLS]
            report = progress_bar(key("stop", i), (*chosen_by, *(["ig_steps"] if options.uses_steps(run) else [])))
    try:
        image, caption = tab().view(run, options, look(), report)
    except Problem as exc:
        st.error(str(exc))
        return
    finally:
        working.empty()  # the Stop and the finished progress line go
    maps.drew(i, run_key, options)
    show_map(i, column, image, caption)
    check_map(i, run, options)


def check_map(i: int, run: ModelRun, options: ViewOptions) -> None:
    """Under column `i`'s map: once checked, its deletion and insertion curves (its line is in the caption); else
    the button that checks it (with progress and a Stop), then the map's part of the page drawn again with the line."""
    check = tab().check_shown(run, options)
    if check.curves is not None:
        with st.expander(LABEL.check_curves):
            st.plotly_chart(check.curves, theme=None, key=key("check_plot", i))
    if not check.offered or not st.button(LABEL.check_map, key=key("check", i)):
        return
    working = st.empty()
    with working.container():
        st.button(LABEL.stop_check, key=key("stop_check", i))
        report = progress_bar(key("stop_check", i), tuple(key(kind, i) for kind in MAP_CONTROLS))
    try:
        tab().check(run, options, report)
    except Problem as exc:
        st.error(str(exc))
        return
    finally:
        working.empty()
    st.rerun(scope="fragment")


def show_map(i: int, column: Column, image: np.ndarray, caption: str) -> None:
    """Model `i`'s map with its caption and a PNG download."""
    st.image(
        image, caption=f"{column.map_title}: {caption}", width="stretch", alt=alt_text.map_of(column.map_title, caption)
    )
    encoded = partial(png, image)  # made when clicked, not on each rerun of the page
    st.download_button(LABEL.map_png, encoded, f"map-{state.runs[i].result.name}.png", "image/png", key=key("map", i))


def model_column(i: int, column: Column) -> None:
    """One model: header, top-5, where it looks (a fragment), lesions."""
    run = state.runs[i]
    st.markdown(column.title)
    st.caption(column.top5_title)
    for label, probability in column.top5.items():
        st.progress(probability, label if column.random else f"{label}: {100 * probability:.1f}%")
    if column.known_classes:
        st.caption(column.known_classes)
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
            state.runs = tab().lesion(state.runs, i, chosen, look()).runs
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
                state.exported = tab().export_figure(state.runs, name, fmt, look(), state.photo_name)
            if right.button(LABEL.export_pack, key="prepare_pack"):
                with st.spinner("Rendering every figure"):
                    state.exported = tab().export_pack(state.runs, state.photo_name, look(), views(page))
        except Problem as exc:
            st.error(str(exc))
        offer(state.get("exported"), "download_export")


def compare_page() -> Page:
    """The Compare tab's page for the session's runs, made again only when the runs or the plots' options
    change. Its maps keep the colours they were made with: the columns draw their own (`where_it_looks`), so
    another opacity or colour map re-uses the page (0.3 s of plotly figures a rerun)."""
    plots = (look().log_y, look().shaded_in([run.result for run in state.runs]))
    made, page = state.get("compare_page", (None, None))
    if made == plots and len(page.runs) == len(state.runs) and all(map(operator.is_, page.runs, state.runs)):
        return page
    page = tab().page(state.runs, look())
    state.compare_page = (plots, page)
    return page


def compare_tab(photo_digest: str) -> None:
    state.pop("under_way", None)  # a run that gets this far has no Analyze under way (one cut short is over)
    st.markdown(text.COMPARE)
    if not state.runs:
        st.info(LABEL.ready)
        return
    if stale := photo_line(photo_digest, state.get("photo_digest"), False, f"**{state.photo_name}**"):
        st.info(stale)
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
    names = dict((position, label) for label, position in page.shade_choices)
    right.selectbox(
        LABEL.shaded, list(names), index=page.shaded, format_func=names.get, key=f"shaded_{state.get('analysis', 0)}"
    )
    st.markdown(text.LENS)
    st.plotly_chart(page.lens, theme=None, key="logit_lens")
    st.markdown(page.lens_here)
    exports(page)
