"""The Streamlit page script as Streamlit's AppTest runs it, and the key of a column's control in it."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from app.tabs.compare import column_key
from tests.conftest import ROOT

SCRIPT = str(ROOT / "app" / "streamlit_app.py")
TIMEOUT_S = 300


def ckey(at: AppTest, kind: str, slot: int) -> str:
    """The key of column `slot`'s control `kind` in the analysis on screen (keys follow the model's run)."""
    return column_key(kind, slot, at.session_state["runs"][slot], at.session_state["analysis"])
