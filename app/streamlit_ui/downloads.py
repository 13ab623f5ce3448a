"""Downloads in Streamlit: a button that prepares a file (its problem shown as such), then the download."""

from __future__ import annotations

from typing import Callable

import streamlit as st

from app.tabs import Download, Problem

state = st.session_state


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
