"""The Guided tour tab in Gradio: one step at a time over the Compare tab's runs, back and next, a deep link
(`?step=3` or `?step=variance`), and the whole tour as a handout."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from app.backend.service import ModelRun
from app.gradio_ui.downloads import saved, shown_on
from app.gradio_ui.errors import user_facing
from app.tabs.compare import Look
from app.tabs.tour import KEYS, TourTab, index_of
from app.views import alt_text
from app.views import texts as text
from app.views.page_style import BRING_INTO_VIEW

ADDRESS = f"""(shown) => {{
    const number = Number((/Step (\\d+) of/.exec(shown || "") || [])[1]);
    if (number) {{
        const address = new URL(window.location.href);
        address.searchParams.set("step", {json.dumps(list(KEYS))}[number - 1]);
        window.history.replaceState(window.history.state, "", address);
    }}
    return [];
}}"""  # the page's address set to ?step=<the step shown> (read from the progress line: a State stays on the server)
FORGET = """(shown) => {
    const address = new URL(window.location.href);
    if (shown && address.searchParams.has("step")) {
        address.searchParams.delete("step");
        window.history.replaceState(window.history.state, "", address);
    }
    return [];
}"""  # another tab shown: the address no longer names a step (a reload opens the Compare tab, as in Streamlit);
# not while the progress line is empty: the first tab's select fires as the page mounts, before a deep link is read
IN_VIEW = f"""() => {{
    if (new URL(window.location.href).searchParams.has("step")) ({BRING_INTO_VIEW})("#tour-progress", 8);
}}"""  # the step's progress line at the top of the screen, its heading under it


def build(tab: TourTab, state: gr.State, tabs: gr.Tabs, page: gr.Tab, demo: gr.Blocks, photo: gr.Textbox) -> None:
    """The tab's widgets and events; `state` holds the Compare tab's runs and `photo` the path of the photo they
    are for; `tabs` selects `page`, the tour's own tab, on a deep link."""
    gr.Markdown(text.TOUR_INTRO)
    position = gr.State(0)
    progress = gr.Markdown(elem_id="tour-progress")
    statement = gr.Markdown(elem_id="tour-statement")
    with gr.Row(equal_height=False):
        picture = gr.Image(show_label=False, interactive=False, visible=False, height=360, elem_id="tour-image")
        plot = gr.Plot(show_label=False, visible=False, elem_id="tour-plot")
    verdict = gr.Markdown(elem_id="tour-verdict")
    with gr.Accordion(text.NUMBERS, open=False, visible=False, elem_id="tour-numbers") as numbers_box:
        numbers = gr.Markdown()
    try_this = gr.Markdown(elem_id="tour-try")
    with gr.Row():
        back = gr.Button("← Back", elem_id="tour-back")
        ahead = gr.Button("Next →", variant="primary", elem_id="tour-next")
        export = gr.Button("Export this tour (handout)", elem_id="tour-export")
    exported = gr.File(label="Download", interactive=False, visible=False, elem_id="tour-file")
    shown = [position, progress, statement, picture, plot, verdict, numbers_box, numbers, try_this, back, ahead]

    @user_facing
    def show(runs: list[ModelRun], index: int) -> list:
        step = tab.step(runs, index + 1, Look())
        return [
            step.number - 1,
            f"**{step.position}**  ·  " + "  ".join("●" if i < step.number else "○" for i in range(len(KEYS))),
            f"### {step.title}\n**The paper:** {step.statement}",
            gr.Image(
                step.image, visible=step.image is not None, alt_text=alt_text.picture(step.title, step.verdict.text)
            ),
            gr.Plot(step.figure, visible=step.figure is not None),
            step.verdict.text,
            gr.Accordion(visible=bool(step.verdict.numbers)),
            step.verdict.numbers,
            f"**Try this:** {step.try_this}",
            gr.Button(interactive=step.number > 1),
            gr.Button(interactive=step.number < len(KEYS)),
        ]

    @user_facing
    def handout(runs: list[ModelRun], path: str | None = None) -> str:  # optional in the API
        return saved(tab.export(runs, Look(), Path(path).name if path else ""))

    def linked(runs: list[ModelRun], request: gr.Request) -> list:
        """The step named in the page's address (`?step=`), the tab selected; else the first step."""
        asked = request.query_params.get("step") if request else None
        return [*show(runs, index_of(asked)), gr.Tabs(selected="tour") if asked else gr.Tabs()]

    # One line for the step events, so their answers arrive in the order asked: a Back clicked while the tab's
    # own refresh is under way is no longer overwritten by that refresh.
    in_order = {"concurrency_id": "tour", "concurrency_limit": 1}
    moved = [
        back.click(
            lambda runs, i: show(runs, max(i - 1, 0)), [state, position], shown, api_name="tour_back", **in_order
        ),
        ahead.click(
            lambda runs, i: show(runs, min(i + 1, len(KEYS) - 1)),
            [state, position],
            shown,
            api_name="tour_next",
            **in_order,
        ),
    ]
    for event in moved:  # the address follows the step (as in Streamlit), so that a teacher can copy a link to it
        event.then(None, progress, None, js=ADDRESS)
    shown_on(export, exported)
    export.click(handout, [state, photo], exported, api_name="tour_export")
    opening = demo.load(linked, state, [*shown, tabs], api_visibility="private", **in_order)
    opening.then(None, js=IN_VIEW)  # a deep link shows its step on the first screen, not the page's top
    opened = page.select(show, [state, position], shown, api_visibility="private", **in_order)  # runs may be new
    opened.then(None, progress, None, js=ADDRESS)
    for other in tabs.children:  # the page's other tabs (the tour's own is among them, being built)
        if other is not page:
            other.select(None, progress, None, js=FORGET)
