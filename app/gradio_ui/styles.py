"""The Gradio page's own styles: the offline banners, captions, the photo's preview, the refusal box, the problem box
(as Streamlit's st.error), and as Streamlit's (app.views.page_style) the focus ring and, in the page's head, the
AlterNet tab's table and drawing at a phone's width and the plots' toolbars."""

import gradio as gr

from app.gradio_ui.errors import REFUSAL_CSS
from app.gradio_ui.photo import PREVIEW_CSS
from app.views.page_style import FOCUS_CSS, LAYOUT_CSS

CSS = (
    """#banner, #alternet-banner {background: #fff4e5; border-left: 4px solid #f59e0b; padding: 8px 12px}
.caption, .note {font-size: 0.85em}
.problem-box {background: #fdecec; color: #7d1f26; border-radius: 8px; padding: 12px 16px}
"""
    + PREVIEW_CSS
    + REFUSAL_CSS
    + FOCUS_CSS
)
# As Streamlit's, as written: Gradio rewrites the page's `css` rule by rule and drops what is not a style, media,
# keyframes or font rule (LAYOUT_CSS's container query, which shows Fig 11's "scroll sideways" line)
HEAD = f"<style>{LAYOUT_CSS}</style>"

# Gradio's default theme writes info lines, slider ends and placeholders in #bbbbc2 (1.9:1 on white) and white on
# orange #f97316 (2.8:1) on primary buttons: below WCAG's 4.5:1 (axe-core's color-contrast). Darker, same hues.
SUBDUED = "#5b5b66"  # 6.6:1 on white
PRIMARY, PRIMARY_HOVER = "#c2410c", "#9a3412"  # white on them: 5.2:1 and 7.3:1
# Gradio's bundled Source Sans Pro SemiBold holds 55 glyphs, no Latin letters past B: semi-bold text (headings,
# Markdown's bold, labels) fell back to another font letter by letter. Regular and Bold only: 600 is drawn in Bold.
FONT = (gr.themes.LocalFont("Source Sans Pro", weights=(400, 700)), "ui-sans-serif", "system-ui", "sans-serif")
THEME = gr.themes.Default(font=FONT).set(
    body_text_color_subdued=SUBDUED,
    input_placeholder_color=SUBDUED,
    button_primary_background_fill=PRIMARY,
    button_primary_background_fill_hover=PRIMARY_HOVER,
    button_primary_text_color="#ffffff",
)
