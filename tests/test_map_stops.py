"""Which Gradio map requests a column's stops end: the rule, without a browser."""

from __future__ import annotations

import time
from types import SimpleNamespace

from app.gradio_ui.stops import SAME_CLICK_S, Stops


def test_a_new_maps_own_stop_of_the_one_before_never_stops_it():
    """Gradio sends a new map's request and its stop of the map before together; on a loaded server the request can
    start first (seen: 0.22 s first). That stop ends the maps started before, not the new one; a Stop pressed stops
    every map started before it."""
    page, stops = SimpleNamespace(session_hash="a page"), Stops()
    older = time.monotonic() - 5  # a map started a while ago
    newer = time.monotonic()  # the new map's request, started before its own stop arrived
    stops.ask(page, 0, anew=True)
    assert stops.since(page, older, 0) and not stops.since(page, newer, 0)
    assert not stops.since(page, older, 1)  # another column's map goes on
    assert SAME_CLICK_S <= 1.0
    stops.ask(page, 0)  # the column's Stop
    assert stops.since(page, newer, 0)
