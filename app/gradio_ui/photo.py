"""The photo input: Gradio's image component, refusing a file that is not an image, or one over Pillow's pixel
limit, with one plain line and one WARNING line (Gradio's own error names the server path). Made with
type="filepath" and image_mode=None, it hands the upload's path to the engine unconverted, to be decoded there
within its pixel bounds."""

from __future__ import annotations

import json

import gradio as gr

from app.gradio_ui.errors import Refusals, page_error
from app.server.gradio_adapter import ImageData
from app.server.refusal import refuse
from app.tabs.compare import not_an_image
from engine.errors import shown

UNSHOWN = "No preview: the browser cannot show this file. Analyze says whether it can be read."

# In the browser: a preview the browser cannot decode (a file that is not an image, or one in a format it does
# not show) is hidden behind UNSHOWN rather than drawn as a broken image; the line goes with the preview.
WATCH_PREVIEW = f"""() => {{
    const mark = (img, broken) => {{
        const box = img.closest('#image-input');
        if (!box) return;
        img.style.visibility = broken ? 'hidden' : '';
        box.querySelector('.unshown')?.remove();
        if (!broken) return;
        const line = document.createElement('p');
        line.className = 'unshown';
        line.textContent = {json.dumps(UNSHOWN)};
        box.appendChild(line);
    }};
    document.addEventListener('error', (e) => e.target.tagName === 'IMG' && mark(e.target, true), true);
    document.addEventListener('load', (e) => e.target.tagName === 'IMG' && mark(e.target, false), true);
    new MutationObserver(() => {{  // a preview cleared (its x) takes the line with it
        const box = document.querySelector('#image-input');
        if (box && !box.querySelector('img')) box.querySelector('.unshown')?.remove();
    }}).observe(document.body, {{childList: true, subtree: true}});
}}"""
PREVIEW_CSS = """#image-input {position: relative}
#image-input .unshown {position: absolute; inset: 40% 1em auto 1em; text-align: center; color: #b45309;
pointer-events: none}"""


def photo_input(refused: Refusals, **options) -> gr.Image:
    """A gr.Image for uploads (`options` as gr.Image's), with a plain message for a file that is not an image,
    kept in `refused` by the upload's path. Its preprocess is wrapped on the instance: a subclass of a Gradio
    component writes a .pyi stub beside its module at import."""
    image = gr.Image(type="filepath", image_mode=None, **options)
    preprocess = image.preprocess

    def checked(payload: ImageData | None) -> str | None:
        try:
            return preprocess(payload)
        except gr.Error:
            raise
        except Exception as exc:  # Pillow's (a pixel bomb: DecompressionBombError) or Gradio's own, naming the path
            name = shown((payload.orig_name if payload else None) or "the upload")
            message = not_an_image(name)
            refuse(f"{message} ({type(exc).__name__})", "a photo Gradio could not read")
            if payload and payload.path:
                refused.add(payload.path, message)
            raise page_error(message) from None

    image.preprocess = checked
    return image


def refused_line(refused: Refusals, payload: dict | None) -> str | None:
    """The line an upload was refused with (kept in `refused`), or None where it was not refused; `payload` as the
    browser sends a photo (an event made with preprocess=False). Only looked up: nothing is read from the path."""
    return refused.get(payload.get("path") if isinstance(payload, dict) else None)
