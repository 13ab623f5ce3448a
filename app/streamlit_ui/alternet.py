"""The AlterNet tab in Streamlit: the placement (step, stage toggles, typed spec, each setting the other two), its
drawing and cost, the photo's or the subset's curves, and the export, over app.tabs.alternet."""

from __future__ import annotations

from typing import Callable

import streamlit as st

from app.streamlit_ui.downloads import export_button
from app.streamlit_ui.photo import unreadable
from app.streamlit_ui.progress import progress_bar
from app.streamlit_ui.resources import lab
from app.tabs import Problem
from app.tabs.alternet import (
    NOT_AVERAGED,
    PAPER_STEP,
    STEPS,
    SUBSET_DEFAULT,
    SUBSET_MAX,
    SUBSET_MIN,
    AlterNetTab,
    Builder,
)
from app.views import alt_text
from app.views import alternet as view
from app.views import texts as text
from app.views.texts import LABEL

state = st.session_state


def tab() -> AlterNetTab:
    return AlterNetTab(lab())


def show_builder(built: Builder) -> None:
    """Set the step, the toggles and the text to a Builder's values."""
    state.spec = state.spec_text = built.spec
    state.step = built.step
    for s, choices in enumerate(view.grid_choices()):
        for _, b in choices:
            state[f"stage_{s}_{b}"] = b in built.grid[s]


def grid() -> list[list[int]]:
    """Per stage, the blocks whose toggle is on."""
    return [[b for _, b in choices if state.get(f"stage_{s}_{b}")] for s, choices in enumerate(view.grid_choices())]


def on_builder(make: Callable[[], Builder]) -> None:
    """Apply a builder control's change to the other two; a bad one is named under the controls."""
    try:
        show_builder(make())
    except Problem as exc:
        state.placement_error = str(exc)


def on_step() -> None:
    if state.step is not None:  # None: a custom placement, set by the toggles or the text
        on_builder(lambda: tab().from_step(state.step))


def on_grid() -> None:
    on_builder(lambda: tab().from_grid(grid()))


def on_text() -> None:
    """A typed placement applied; a bad one's problem is kept beside the text, shown while the box holds it."""
    try:
        show_builder(tab().from_text(state.spec_text))
    except Problem as exc:
        state.spec_problem = (state.spec_text, str(exc))


def spec_problem() -> str | None:
    """The problem of the text in the spec box (None: it is the placement shown, or no text was typed)."""
    typed, why = state.get("spec_problem", (None, None))
    return why if typed == state.get("spec_text") else None


def alternet_tab(picture: tuple[bytes, str], photo_digest: str, shown: bool) -> None:
    """The tab: its controls on every run, open (`shown`) or not (drawn again after the tab was closed, Streamlit's
    spec box showed nothing and lost what was typed into it), its drawing and curves only while it is open."""
    st.markdown(text.ALTERNET)
    if "step" not in state:
        show_builder(tab().from_step(PAPER_STEP))
    left, right, bad = *st.columns(2), spec_problem()
    with left:
        st.radio(LABEL.step, range(len(STEPS)), horizontal=True, key="step", on_change=on_step)
        for s, choices in enumerate(view.grid_choices()):  # a checkbox per block, as Gradio's CheckboxGroup
            with st.container(key=f"alternet_stage_{s + 1}"):
                st.markdown(f"**{LABEL.stage.format(stage=s + 1)}**")
                st.caption(view.stage_info(s))
                with st.container(horizontal=True):
                    for label, b in choices:
                        st.checkbox(label, key=f"stage_{s}_{b}", on_change=on_grid)
        st.text_input(LABEL.spec, key="spec_text", on_change=on_text)
        if "placement_error" in state:
            st.error(state.pop("placement_error"), icon="⚠️")
        elif bad:
            st.error(bad, icon="⚠️")
    right.container(key="alternet_steps").markdown(view.steps_markdown())  # scrolls in its box (STYLE)
    count = st.slider(LABEL.subset_count, SUBSET_MIN, SUBSET_MAX, SUBSET_DEFAULT, 10, key="subset_count")
    averaged = st.button(LABEL.subset, key="subset")
    if shown:
        results(picture, photo_digest, count, averaged)


def results(picture: tuple[bytes, str], photo_digest: str, count: int, averaged: bool) -> None:
    """The drawing, cost and curves of the placement shown: the photo's, or the subset's when `averaged`."""
    key = (photo_digest, state.spec)
    try:
        if averaged:
            try:  # while the spec box holds no placement, the last good placement's results stay, said so
                AlterNetTab.unless_typed_bad(NOT_AVERAGED, state.get("spec_text"))
            except Problem as exc:
                st.error(str(exc))
            else:
                state.alternet_view, state.alternet_key = tab().on_subset(state.spec, count, progress_bar()), key
        elif state.get("alternet_key") != key:  # a new photo or placement: the photo's curves
            if problem := unreadable(picture):  # refused (and logged) once already
                raise Problem(problem)
            state.alternet_view, state.alternet_key = tab().on_photo(state.spec, *picture), key
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
    columns[0].image(shown.seen, caption=LABEL.seen, alt=alt_text.picture(LABEL.seen, shown.measured))
    columns[1].plotly_chart(shown.high_frequency, theme=None, key="alternet_high_frequency")
    columns[2].plotly_chart(shown.variance, theme=None, key="alternet_variance")
    if shown.accuracy:
        st.markdown(shown.accuracy)
    st.markdown(shown.here)
    export_button(LABEL.alternet_export, "alternet", lambda: tab().export(shown, state.get("spec_text")))
