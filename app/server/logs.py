"""The server's log lines, laid out alike by every front end (Gradio and Streamlit), one line each:
`2026-11-26 09:06:54,967 WARNING vit_explorer: refused a photo Streamlit could not read: notes.png: not an image`.
"""

from __future__ import annotations

import logging

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
QUIET = ("choreographer", "kaleido", "logistro")  # the export browser's libraries: a line per temporary folder removed


def configure() -> None:
    """Lines at INFO and above, laid out as FORMAT, to standard error. Called again (every Streamlit rerun
    runs the script anew), it changes nothing: the first call's handler stays the only one. The libraries in QUIET
    say only their warnings and errors."""
    logging.basicConfig(level=logging.INFO, format=FORMAT)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
