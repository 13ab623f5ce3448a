"""Every face of the Gradio page's text font draws the whole Latin alphabet: bold text never mixes fonts letter by
letter (Gradio's bundled Source Sans Pro SemiBold holds 55 glyphs)."""

from __future__ import annotations

import re
import string
from pathlib import Path

import gradio as gr
from fontTools.ttLib import TTFont

from app.gradio_ui.styles import THEME

STATIC = Path(gr.__file__).parent / "templates" / "frontend"
FACE = re.compile(r"@font-face\s*{[^}]*font-family:\s*'([^']+)';[^}]*url\('([^']+)'\)[^}]*font-weight:\s*(\d+)")


def test_every_declared_face_of_the_text_font_has_every_latin_letter_and_digit():
    faces = [face for face in FACE.findall(THEME._get_theme_css()) if face[0] == THEME._font[0].name]
    assert {weight for _, _, weight in faces} == {"400", "700"}, faces  # semi-bold drawn in the Bold face
    for _, url, weight in faces:
        glyphs = TTFont(STATIC / url).getBestCmap()
        missing = [c for c in string.ascii_letters + string.digits if ord(c) not in glyphs]
        assert not missing, (url, weight, "".join(missing))
