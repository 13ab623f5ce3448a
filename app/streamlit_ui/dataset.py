"""The Dataset curves section in Streamlit (as app/gradio_ui/dataset.py): Figs 2a, 8 and 9 averaged over a ZIP of
images for the picked models, with their export."""

from __future__ import annotations

import tempfile

import streamlit as st

from app.streamlit_ui.downloads import export_button
from app.streamlit_ui.progress import progress_bar
from app.streamlit_ui.resources import service
from app.tabs import Problem
from app.tabs.dataset import EXPLANATION, DatasetTab
from app.views.texts import LABEL

state = st.session_state


def dataset_section(names: list[str], typed: str, weights: str) -> None:
    """Figs 2a, 8 and 9 averaged over a ZIP of images for the picked models, with their export."""
    dataset = DatasetTab(service())
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
