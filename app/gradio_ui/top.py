"""What sits above the tabs in Gradio, for every tab: the offline notice, the photo and the sample photos, the models
and their weights, Analyze and its status line, the photo the results are for, and the session's runs and each
column's chosen map."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

import gradio as gr

from app.backend.service import AUTO, MAX_MODELS, SAMPLES, WEIGHT_LABELS, WEIGHT_MODES, Service, default_models
from app.gradio_ui.errors import Refusals
from app.gradio_ui.photo import photo_input, refused_line
from app.tabs import notice
from app.views import texts as text
from app.views.texts import LABEL

# gr.Examples draws each sample photo as a button holding an image without a text alternative, so that a screen
# reader hears "button" and nothing more (axe-core's button-name): the page names each button for its photo
NAMING_SAMPLES = f"""() => {{
    const names = {json.dumps([f"Sample photo: {path.stem}" for path in SAMPLES])};
    const name = () => document.querySelectorAll('#sample-photos .gallery-item').forEach((button, i) => {{
        if (names[i] && button.getAttribute('aria-label') !== names[i]) button.setAttribute('aria-label', names[i]);
    }});
    name();
    new MutationObserver(name).observe(document.body, {{childList: true, subtree: true}});
}}"""


@dataclass
class Top:
    """The widgets above the tabs and the session's state they feed."""

    banner: gr.Markdown  # the offline notice: in full until a photo is analyzed, then in a line (app.tabs.notice)
    image: gr.Image
    models: gr.CheckboxGroup
    typed_models: gr.Textbox
    weights: gr.Radio
    run: gr.Button
    status: gr.Markdown
    analyzed_photo: gr.Textbox
    under_way: gr.Checkbox  # whether an Analyze is under way, as the browser knows it (the photo's change reports it)
    state: gr.State
    views: gr.State
    refused: Refusals  # the photo uploads refused: their path, the line each was refused with

    @classmethod
    def layout(cls, service: Service, session_ttl_s: int) -> Top:
        """The photo beside the models, their weights, Analyze and its status; the session's state kept for
        `session_ttl_s` after its last change."""
        refused = Refusals()
        online = service.online
        banner = gr.Markdown(notice(online, analyzed=False), visible=not online, elem_id="banner")
        with gr.Row(equal_height=False):
            with gr.Column(scale=2):
                image = photo_input(
                    refused, label=LABEL.photo, sources=["upload", "clipboard"], height=320, elem_id="image-input"
                )
                # under the photo, not under Analyze: the row is no taller than the models' column, so that the
                # tabs start on the first screen
                gr.Examples(
                    [[str(path)] for path in SAMPLES], inputs=image, label="Sample photos", elem_id="sample-photos"
                )
            with gr.Column(scale=3):
                models = gr.CheckboxGroup(
                    service.models(),
                    value=list(default_models(online)),
                    label=LABEL.models.format(count=MAX_MODELS),
                    elem_id="models",
                )
                typed_models = gr.Textbox(
                    label=LABEL.typed_models,
                    placeholder=LABEL.typed_placeholder,
                    info=text.ANY_TIMM,
                    elem_id="typed-models",
                )
                weights = gr.Radio(
                    [(WEIGHT_LABELS[mode], mode) for mode in WEIGHT_MODES],
                    value=AUTO,
                    label=LABEL.weights,
                    info=text.WEIGHTS,
                )
                run = gr.Button(LABEL.analyze, variant="primary")
                status = gr.Markdown(LABEL.ready, min_height=48, elem_id="status")
                analyzed_photo = gr.Textbox(visible=False)  # the photo the results are for, for the note below
                under_way = gr.Checkbox(visible=False)
        state = gr.State([], time_to_live=session_ttl_s)
        views = gr.State({}, time_to_live=session_ttl_s)  # each column's map as last chosen, for the exports
        return cls(
            banner, image, models, typed_models, weights, run, status, analyzed_photo, under_way, state, views, refused
        )

    def refused_status(self, photo: dict | None) -> str | dict:
        """The status line after a failed Analyze: the line `photo` (as sent, not preprocessed) was refused with,
        else as it was."""
        line = refused_line(self.refused, photo)
        return gr.skip() if line is None else html.escape(line, quote=False)
