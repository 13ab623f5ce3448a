"""The Streamlit explorer as served: the page (app/streamlit_app.py) behind the same limits as the Gradio app.

    streamlit run app/streamlit_server.py      (or: bash scripts/run.sh --ui streamlit)

Each visitor is counted behind the trusted proxies and their uploads are bounded (app.server.streamlit_guard
.StreamlitGuard); closed pages' sessions let go of what they hold (serving.sweeping).
"""

import sys
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `streamlit run` puts app/ first, not the repo

from app.server.streamlit_guard import StreamlitGuard, sweeping  # noqa: E402

app = st.App("streamlit_app.py", middleware=[Middleware(StreamlitGuard)], lifespan=sweeping)
