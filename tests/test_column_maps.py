"""The rules of a column's map in progress, for every front end, without a browser or a server: what a Stop or a
newer map ends, when a column is settled, and one Analyze at a time per page."""

from __future__ import annotations

import threading
import time

from app.tabs.column_maps import SAME_CLICK_S, Asked, ColumnMaps, OnePerSession, analyzes, stopped_line
from app.views.texts import LABEL

PAGE, OTHER_PAGE = "a page", "another page"


def test_a_new_maps_own_stop_of_the_one_before_never_stops_it():
    """Gradio sends a new map's request and its stop of the map before together; on a loaded server the request can
    start first (seen: 0.22 s first). That stop ends the maps started before, not the new one; a Stop pressed stops
    every map started before it."""
    maps = ColumnMaps()
    older = time.monotonic() - 5  # a map started a while ago
    newer = time.monotonic()  # the new map's request, started before its own stop arrived
    maps.ask(PAGE, 0)
    assert maps.stopped_since(PAGE, 0, older) and not maps.stopped_since(PAGE, 0, newer)
    assert not maps.stopped_since(PAGE, 1, older)  # another column's map goes on
    assert not maps.stopped_since(OTHER_PAGE, 0, older)  # and another page's
    assert SAME_CLICK_S <= 1.0
    maps.stop(PAGE, 0)  # the column's Stop
    assert maps.stopped_since(PAGE, 0, newer)


def test_only_the_end_of_a_request_started_after_the_last_ask_settles_the_column():
    """A stopped request ends late, after the next map has shown its Stop: its end must not hide that Stop."""
    maps = ColumnMaps()
    first = time.monotonic()
    maps.ask(PAGE, 0)  # the first map asked for...
    time.sleep(0.01)
    maps.ask(PAGE, 0)  # ...and a second one before the first has ended
    second = time.monotonic()
    maps.end(PAGE, 0, first)  # the first request ends (it started before the second ask)
    assert not maps.settled(PAGE, 0)
    maps.end(PAGE, 0, second)
    assert maps.settled(PAGE, 0)
    maps.stop(PAGE, 0)  # a Stop waits for its request's end too (Compute stays offered meanwhile)
    assert not maps.settled(PAGE, 0)


def test_a_page_wide_redraw_is_stopped_by_a_stop_pressed_while_it_waits():
    maps = ColumnMaps()
    maps.ask_page(PAGE)
    asked = maps.page_asked(PAGE)
    time.sleep(0.01)
    assert maps.page_asked(PAGE) == asked  # the time it was asked, not when its request started
    maps.stop(PAGE, 2)
    assert maps.stopped_since(PAGE, 2, asked) and not maps.stopped_since(PAGE, 1, asked)


def test_a_map_request_sent_after_its_columns_stop_is_stopped_until_the_column_asks_again():
    """A change made before the Stop can reach the server after it (the page resends a queued change once the
    stopped request has ended: seen in CI 0.19 s after a Stop). The column's last word was its Stop, so that late
    request is stopped; "Compute this map" (an ask after the Stop) computes. A direct API call never asks: only a
    Stop pressed after it started stops it."""
    maps = ColumnMaps()
    maps.ask(PAGE, 0)
    time.sleep(0.01)
    maps.stop(PAGE, 0)
    time.sleep(0.01)
    late = time.monotonic()  # the resent request starts after the Stop
    assert maps.stopped_since(PAGE, 0, late)
    assert not maps.stopped_since(PAGE, 1, late)
    maps.ask(PAGE, 0)  # Compute this map
    assert not maps.stopped_since(PAGE, 0, time.monotonic())
    api = "an API client"
    maps.stop(api, 0)
    time.sleep(0.01)
    called = time.monotonic()
    assert not maps.stopped_since(api, 0, called)
    maps.stop(api, 0)
    assert maps.stopped_since(api, 0, called)


def test_a_direct_call_is_never_stopped_and_always_settled():
    maps = ColumnMaps()
    maps.ask(None, 0)
    maps.stop(None, 0)
    assert not maps.stopped_since(None, 0, 0.0) and maps.settled(None, 0)


def test_a_second_analyze_from_the_same_page_does_nothing_while_the_first_runs():
    analyzing, inside, release, seen = OnePerSession(), threading.Event(), threading.Event(), []

    def first() -> None:
        with analyzing.only_one(PAGE) as runs:
            seen.append(("first", runs))
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(10)
    with analyzing.only_one(PAGE) as runs:  # the double click
        seen.append(("second", runs))
    with analyzing.only_one(OTHER_PAGE) as runs:  # another page is not held up
        seen.append(("other page", runs))
    release.set()
    thread.join(10)
    with analyzing.only_one(PAGE) as runs:  # after the first has finished
        seen.append(("later", runs))
    assert seen == [("first", True), ("second", False), ("other page", True), ("later", True)]


def test_a_stopped_column_says_which_map_it_shows():
    assert stopped_line(True).startswith(LABEL.map_stopped) and "previous one" in stopped_line(True)
    assert stopped_line(False) == LABEL.map_stopped  # no map before it: nothing to call "the previous one"


def test_a_checks_stop_stops_the_check_in_progress_and_no_later_one_nor_the_map():
    maps = ColumnMaps()
    started = time.monotonic()
    maps.stop_check("page", 0)
    assert maps.check_stopped_since("page", 0, started)  # the check in progress stops
    assert not maps.check_stopped_since("page", 1, started) and not maps.check_stopped_since("other", 0, started)
    assert not maps.stopped_since("page", 0, started)  # the map is not the check
    later = time.monotonic() + 0.001
    assert not maps.check_stopped_since("page", 0, later)  # a check asked for after the Stop runs
    maps.stop_check(None, 0)
    assert not maps.check_stopped_since(None, 0, started)  # a direct call: nothing stops it


def test_a_second_analyze_asking_for_the_one_under_way_does_nothing_and_another_waits_for_it():
    """The one rule for a second Analyze, in both front ends (column_maps.analyzes): the same photo, models and
    weights as the Analyze under way analyze nothing (it fills the page); anything else analyzes, in Gradio once the
    first has ended; with nothing under way, whatever is asked analyzes afresh."""
    cat, coffee = Asked("cat.jpg", ("resnet50", "vit_cifar"), "auto"), Asked("coffee.jpg", ("resnet50",), "auto")
    assert not analyzes(cat, cat) and analyzes(coffee, cat) and analyzes(cat, None)
    assert analyzes(Asked("cat.jpg", ("resnet50", "vit_cifar"), "random"), cat)  # other weights
    analyzing, inside, release, seen = OnePerSession(), threading.Event(), threading.Event(), []

    def first() -> None:
        with analyzing.only_one(PAGE, cat) as runs:
            seen.append(("first", runs))
            inside.set()
            release.wait(10)
            seen.append(("first ends", True))

    def other() -> None:
        with analyzing.only_one(PAGE, coffee) as runs:
            seen.append(("another photo", runs))

    thread, waiting = threading.Thread(target=first), threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    with analyzing.only_one(PAGE, cat) as runs:  # the double click
        seen.append(("same", runs))
    waiting.start()
    time.sleep(0.2)
    assert ("another photo", True) not in seen  # it waits for the first
    release.set()
    thread.join(10)
    waiting.join(10)
    assert seen == [("first", True), ("same", False), ("first ends", True), ("another photo", True)]
