"""Only the open tab is drawn on a run: a hidden tab's charts cost the browser about as much as a shown one's (an
Analyze took 2.2x Gradio's time with every tab drawn, 1.1x with only the open ones; bench/front_end_speed.py).
Streamlit forgets the value of a widget not drawn in a run, so a closed tab's widgets are written back first as
session values (Streamlit's own way to keep a widget's value across pages): a teacher's settings stay. (Not for a
text box: drawn again after its tab was closed, Streamlit's showed nothing and lost what was typed, so the AlterNet tab
draws its controls on every run and only its pictures while it is open.)"""

from __future__ import annotations

from typing import Callable

import streamlit as st

state = st.session_state


def drawn(section, kept: Callable[[str], bool]) -> bool:
    """Whether `section` (a tab of st.tabs made with on_change="rerun") is open, to be drawn; while it is closed,
    the values of its widgets (the keys for which `kept` is true) are kept for when it opens again."""
    if section.open:
        return True
    for key in [key for key in state.keys() if isinstance(key, str) and kept(key)]:
        state[key] = state[key]
    return False
