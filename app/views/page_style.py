"""Styles both front ends add to their page, written once: a focus ring that a keyboard user can see on every control
(3 px, #0b57d0: 6.4:1 against white, offset from the control so that it stands on the page's own background), also
where a framework hides the native input and draws its own box (Streamlit's checkboxes and radios, Gradio's
tabs)."""

FOCUS_COLOUR = "#0b57d0"
FOCUS_WIDTH_PX = 3

CONTRAST_CSS = """
[data-testid=stCaptionContainer], [data-testid=stCaptionContainer] p {color: #5b5b66 !important; opacity: 1 !important}
"""  # Streamlit's captions are #828180 on white, 3.9:1, under WCAG's 4.5:1 (Gradio's own: its theme, gradio_ui/styles)

FOCUS_CSS = f"""
:focus-visible {{outline: {FOCUS_WIDTH_PX}px solid {FOCUS_COLOUR} !important; outline-offset: 2px !important}}
label:has(> input:focus-visible) {{outline: {FOCUS_WIDTH_PX}px solid {FOCUS_COLOUR}; outline-offset: 2px}}
"""
