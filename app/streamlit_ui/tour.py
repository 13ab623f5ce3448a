"""The guided tour in Streamlit: one step at a time over the Compare tab's runs, its address naming the step."""

from __future__ import annotations

import streamlit as st

from app.streamlit_ui.compare import look
from app.streamlit_ui.downloads import export_button
from app.streamlit_ui.resources import service
from app.tabs.tour import KEYS as TOUR_KEYS
from app.tabs.tour import TourTab, address
from app.tabs.tour import index_of as tour_index
from app.views import alt_text
from app.views import texts as text
from app.views.page_style import BRING_INTO_VIEW

state = st.session_state
HEADER_PX = 72  # Streamlit's header bar lies over the page's top 60 px


def move(delta: int) -> None:
    """Back or next in the tour (the address follows: `linked`)."""
    state.tour_step = min(max(state.tour_step + delta, 0), len(TOUR_KEYS) - 1)


def linked(on_tour: bool) -> None:
    """The page's address names the tour's step while the tour is shown (a link a teacher can copy), and no step
    once another tab is (a reload then opens the Compare tab)."""
    if (step := address(state.tour_step if on_tour else None)) is not None:
        st.query_params["step"] = step
    elif "step" in st.query_params:
        del st.query_params["step"]


def tour_tab() -> None:
    """The guided tour over the Compare tab's runs: one step, back and next, the whole tour as a handout."""
    tour = TourTab(service())
    st.markdown(text.TOUR_INTRO)
    deep_link = "tour_step" not in state and "step" in st.query_params  # this session opened on a step's address
    if "tour_step" not in state:
        state.tour_step = tour_index(st.query_params.get("step"))
    step = tour.step(state.get("runs", []), state.tour_step + 1, look())
    with st.container(key="tour_step_heading"):
        st.progress(step.number / len(TOUR_KEYS), step.position)
        st.markdown(f"### {step.title}\n**The paper:** {step.statement}")
    if deep_link:  # the step on the first screen, not the page's top, clear of Streamlit's header
        script = f"<script>({BRING_INTO_VIEW})('.st-key-tour_step_heading', {HEADER_PX})</script>"
        st.html(script, unsafe_allow_javascript=True)
    if step.image is not None:
        st.image(step.image, alt=alt_text.picture(step.title, step.verdict.text))
    if step.figure is not None:
        st.plotly_chart(step.figure, theme=None, key=f"tour_plot_{step.key}")
    st.markdown(step.verdict.text)
    if step.verdict.numbers:
        with st.expander(text.NUMBERS):
            st.markdown(step.verdict.numbers)
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
