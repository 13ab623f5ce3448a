"""The Gradio page's own styles: the offline banners, captions, the AlterNet table, the photo's preview, the
refusal box and the problem box (as Streamlit's st.error)."""

from app.gradio_ui.errors import REFUSAL_CSS
from app.gradio_ui.photo import PREVIEW_CSS

CSS = (
    """#banner, #alternet-banner {background: #fff4e5; border-left: 4px solid #f59e0b; padding: 8px 12px}
.caption, .note {font-size: 0.85em}
#alternet-steps table {display: block; overflow-x: auto}
#alternet-steps td:last-child {white-space: nowrap}
.problem-box {background: #fdecec; color: #7d1f26; border-radius: 8px; padding: 12px 16px}
"""
    + PREVIEW_CSS
    + REFUSAL_CSS
)
