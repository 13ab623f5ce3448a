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
from app.tabs.tour import KEYS, TourTab, address, index_of
from app.views import alt_text
from app.views import texts as text
from app.views.page_style import BRING_INTO_VIEW

WRITES_ADDRESS = """(said) => {
    if (!said) return [];
    const address = new URL(window.location.href), step = JSON.parse(said).step;
    if (step) address.searchParams.set("step", step);
    else address.searchParams.delete("step");
    if (address.href !== window.location.href) window.history.replaceState(window.history.state, "", address);
    return [];
}"""  # the page's address as the page model's tour `address` said it, in a hidden box (a State stays on the server)
IN_VIEW = f"""(said) => {{
    if (said && JSON.parse(said).step) ({BRING_INTO_VIEW})("#tour-progress", 8);
    return [];
}}"""  # a deep link: the step's progress line at the top of the screen, its heading under it


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
    said = gr.Textbox(visible=False)  # what the page's address names of the tour: {"step": key or null}, as JSON
    shown = [position, progress, statement, picture, plot, verdict, numbers_box, numbers, try_this, back, ahead, said]

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
            json.dumps({"step": address(step.number - 1)}),
        ]

    @user_facing
    def handout(runs: list[ModelRun], path: str | None = None) -> str:  # optional in the API
        return saved(tab.export(runs, Look(), Path(path).name if path else ""))

    def linked(runs: list[ModelRun], request: gr.Request) -> list:
        """The step named in the page's address (`?step=`), the tab selected; else the first step."""
        asked = request.query_params.get("step") if request else None
        step = [*show(runs, index_of(asked))]
        if not asked:  # the tour is not shown: the address names no step
            step[-1] = json.dumps({"step": address(None)})
        return [*step, gr.Tabs(selected="tour") if asked else gr.Tabs()]

    def forget(shown: str) -> str | dict:
        """Another tab shown: the address names no step (not while the progress line is empty: the first tab's
        select fires as the page mounts, before a deep link is read)."""
        return json.dumps({"step": address(None)}) if shown else gr.skip()

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
        event.then(None, said, None, js=WRITES_ADDRESS)
    shown_on(export, exported)
    export.click(handout, [state, photo], exported, api_name="tour_export")
    opening = demo.load(linked, state, [*shown, tabs], api_visibility="private", **in_order)
    opening.then(None, said, None, js=WRITES_ADDRESS)
    opening.then(None, said, None, js=IN_VIEW)  # a deep link shows its step on the first screen, not the page's top
    opened = page.select(show, [state, position], shown, api_visibility="private", **in_order)  # runs may be new
    opened.then(None, said, None, js=WRITES_ADDRESS)
    for other in tabs.children:  # the page's other tabs (the tour's own is among them, being built)
        if other is not page:
            gone = other.select(forget, progress, said, queue=False, api_visibility="private")
            gone.then(None, said, None, js=WRITES_ADDRESS)
