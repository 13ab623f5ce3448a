"""The paper's figures in Streamlit: stored results at once, Recompute per analysis, over app.tabs.paper."""

from __future__ import annotations

import streamlit as st

from app.exports.paper_findings import MAX_IMAGES
from app.streamlit_ui.downloads import export_button
from app.streamlit_ui.progress import progress_bar
from app.streamlit_ui.resources import board
from app.tabs import Problem
from app.tabs.paper import NOISE, PaperTab
from app.views.texts import LABEL

state = st.session_state


def paper_widget(key: str) -> bool:
    """Whether `key` is one of the tab's widgets that hold a value (each figure's number of images)."""
    return key.startswith("paper_") and key.endswith("_images")


def paper_tab(picture: tuple[bytes, str]) -> None:
    """Figs 1a, 1b, 1c/4, 2b, 10a, 10b and 12b, and the map checks: stored results at once, Recompute per analysis
    (where the app recomputes it)."""
    paper = PaperTab(board())
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
