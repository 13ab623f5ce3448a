"""Which Gradio map requests a column's stops end: the rule, without a browser."""

from __future__ import annotations

import time
from types import SimpleNamespace

from app.gradio_ui.stops import SAME_CLICK_S, ask_stop, stopped_since


def test_a_new_maps_own_stop_of_the_one_before_never_stops_it():
    """Gradio sends a new map's request and its stop of the map before together; on a loaded server the request can
    start first (seen: 0.22 s first). That stop ends the maps started before, not the new one; a Stop pressed stops
    every map started before it."""
    page = SimpleNamespace(session_hash="a page")
    older = time.monotonic() - 5  # a map started a while ago
    newer = time.monotonic()  # the new map's request, started before its own stop arrived
    ask_stop(page, 0, anew=True)
    assert stopped_since(page, older, 0) and not stopped_since(page, newer, 0)
    assert not stopped_since(page, older, 1)  # another column's map goes on
    assert SAME_CLICK_S <= 1.0
    ask_stop(page, 0)  # the column's Stop
    assert stopped_since(page, newer, 0)
