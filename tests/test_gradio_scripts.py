"""Every script the Gradio front end ships, read from the Blocks config of the built page (each event's `js`) and
from the page's head, and what each may do: apply what the page model decided (cancel, write the address it chose,
write a text it wrote), or what only a browser can do (keep focus, describe plots for screen readers, see what it
cannot decode). No page rule is decided in the browser: a new script not on this list fails by name."""

from __future__ import annotations

import pytest

from app.gradio_ui import compare, tour
from app.gradio_ui.errors import SHOW_REFUSALS
from app.gradio_ui.photo import WATCH_PREVIEW
from app.gradio_ui.repeats import dropping_repeats, writing
from app.gradio_ui.styles import HEAD
from app.gradio_ui.top import NAMING_SAMPLES
from app.tabs import notice
from app.views.page_style import DESCRIBE_PLOTS, KEEP_FOCUS
from app.views.texts import LABEL

ALLOWED = {  # what a script may do: the scripts that do it
    "cancels the events it names (its own function does nothing)": ["() => []"],
    "writes the address the page model chose (the tour's ?step=, TourTab's address)": [tour.WRITES_ADDRESS],
    "scrolls a deep link's step into view": [tour.IN_VIEW],
    "reports what only the browser knows, whether an Analyze is under way, to the page model's photo_line": [
        compare.REPORTS_UNDER_WAY
    ],
    "marks the Analyze under way as ended": [compare.ENDS_UNDER_WAY],
    "drops a repeat of the Analyze under way (column_maps.analyzes answers it with nothing), marks an Analyze under "
    "way and closes the error toasts": [compare.SENDS_ANALYZE],
    "drops a photo change the browser reports twice for one upload": [dropping_repeats("alternet_photo")],
    "writes a text the page model wrote (the offline notice in a line)": [
        writing(notice(online, analyzed=True)) for online in (False, True)
    ],
    "closes the error toasts": [compare.CLOSING_ERRORS],
    "hides a preview the browser cannot decode": [WATCH_PREVIEW],
    "shows the server's refusal of a request, which Gradio's page draws as a bare 'Error'": [SHOW_REFUSALS],
    "names the sample photos for a screen reader": [NAMING_SAMPLES],
    "describes the plots for a screen reader": [DESCRIBE_PLOTS],
    "keeps keyboard focus where it was": [KEEP_FOCUS],
}
PURPOSE = {script: purpose for purpose, scripts in ALLOWED.items() for script in scripts}


@pytest.fixture(scope="module")
def config() -> dict:
    from app.gradio_app import build

    return build().demo.config


def event_name(config: dict, dependency: dict) -> str:
    """An event as a reader finds it: its API name, or its trigger and the component's label or id."""
    components = {c["id"]: c.get("props", {}) for c in config["components"]}
    triggers = []
    for target, event in dependency.get("targets", []):
        props = components.get(target, {})
        triggers.append(f"{event} of {props.get('elem_id') or props.get('label') or f'component {target}'}")
    api = dependency.get("api_name")
    return f"{api or 'a private event'} ({', '.join(triggers) or 'no trigger'})"


def scripts(config: dict) -> list[tuple[str, str]]:
    """(event, script) for every event of the page that runs a script in the browser."""
    return [(event_name(config, d), d["js"]) for d in config["dependencies"] if d.get("js")]


def test_every_script_the_gradio_page_ships_does_only_what_it_is_allowed(config: dict):
    shipped = scripts(config)
    assert len(shipped) > 10, "the page's events were read"
    unknown = {event: script[:160] for event, script in shipped if script not in PURPOSE}
    assert not unknown, f"scripts not on the allow-list (decide in the page model, or name what they may do): {unknown}"


def test_every_allowed_script_is_still_shipped(config: dict):
    shipped = {script for _, script in scripts(config)}
    unused = [purpose for purpose, allowed in ALLOWED.items() if not shipped & set(allowed)]
    assert not unused, f"allowed but no longer shipped (take them off the list): {unused}"


def test_the_page_head_and_the_blocks_carry_no_script(config: dict):
    assert "<script" not in HEAD.lower() and "javascript:" not in HEAD.lower()
    assert not config.get("js") and "<script" not in (config.get("head") or "").lower()


def test_no_script_holds_a_page_rule():
    """The rules moved to the page model leave no copy in the browser: the stale line's words, the model limit,
    which controls apply to a map, the tour's steps."""
    from app.backend.service import MAX_MODELS
    from app.tabs.tour import KEYS

    rules = {
        "the stale line": LABEL.stale.split("{")[0],
        "the model limit": f"slice(0, {MAX_MODELS})",
        "the attention controls": '"interactive"',
        "the tour's steps": f'"{KEYS[1]}"',
    }
    for script in PURPOSE:
        assert not [rule for rule, words in rules.items() if words in script], script[:160]
