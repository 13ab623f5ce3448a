"""The Gradio page's own styles: the offline banners, captions, the AlterNet table, the photo's preview and the
refusal box."""

from app.gradio_ui.errors import REFUSAL_CSS
from app.gradio_ui.photo import PREVIEW_CSS

CSS = (
    """#banner, #alternet-banner {background: #fff4e5; border-left: 4px solid #f59e0b; padding: 8px 12px}
.caption {font-size: 0.85em}
#alternet-steps table {display: block; overflow-x: auto}
#alternet-steps td:last-child {white-space: nowrap}
"""
    + PREVIEW_CSS
    + REFUSAL_CSS
)
