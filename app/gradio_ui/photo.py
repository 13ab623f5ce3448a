"""The photo input: Gradio's image component, refusing a file that is not an image with one plain line
(Gradio's own error names the server path). Made with type="filepath" and image_mode=None, it hands the
upload's path to the engine unconverted, to be decoded there within its pixel bounds."""

from __future__ import annotations

import gradio as gr
from gradio.data_classes import ImageData
from PIL import UnidentifiedImageError


def photo_input(**options) -> gr.Image:
    """A gr.Image for uploads (`options` as gr.Image's), with a plain message for a file that is not an image.
    Its preprocess is wrapped on the instance: a subclass of a Gradio component writes a .pyi stub beside
    its module at import."""
    image = gr.Image(type="filepath", image_mode=None, **options)
    preprocess = image.preprocess

    def checked(payload: ImageData | None) -> str | None:
        try:
            return preprocess(payload)
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
            name = (payload.orig_name if payload else None) or "the upload"
            raise gr.Error(f"{name}: not an image, or a format that cannot be read", print_exception=False) from None

    image.preprocess = checked
    return image
