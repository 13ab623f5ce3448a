"""ViT explorer in Gradio: upload a photo, compare models side by side, explore what they measure.

python -m app.gradio_app --host 127.0.0.1 --port 7860
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import threading
import time
from dataclasses import dataclass

import gradio as gr
from starlette.middleware import Middleware

from app.backend.cifar_lab import CifarLab
from app.backend.service import SAMPLES, Service
from app.exports.paper_findings import PaperFindings
from app.gradio_ui import alternet as alternet_panel
from app.gradio_ui import dataset as dataset_panel
from app.gradio_ui import paper as findings_panel
from app.gradio_ui import tour as tour_panel
from app.gradio_ui.api_defaults import ApiDefaults
from app.gradio_ui.cache_files import write_images_whole
from app.gradio_ui.compare import Compare
from app.gradio_ui.errors import SHOW_REFUSALS
from app.gradio_ui.photo import WATCH_PREVIEW
from app.gradio_ui.sessions import Sessions
from app.gradio_ui.styles import CSS, HEAD, THEME
from app.gradio_ui.top import NAMING_SAMPLES, Top
from app.server import gradio_adapter as internals
from app.server.logs import configure as configure_logging
from app.server.middleware import RequestGuard
from app.server.settings import SETTINGS
from app.server.uploads import SessionFiles, Uploads
from app.server.visitors import Proxies
from app.tabs.alternet import AlterNetTab
from app.tabs.compare import CompareTab
from app.tabs.dataset import DatasetTab
from app.tabs.paper import PaperTab
from app.tabs.tour import TourTab
from app.views import texts as text
from app.views.page_style import DESCRIBE_PLOTS, KEEP_FOCUS

QUEUE_SIZE = 64  # requests waiting past this are refused with "queue is full"
CONCURRENCY = 8  # events of one kind in progress at once; their model work takes turns (app/server/turns.py)
MAX_UPLOAD = "50mb"
SESSION_TTL_S = 3600  # a browser session's stored results are dropped an hour after their last change
FILE_TTL_S = 3600  # uploaded and generated files are deleted after an hour (checked every 10 minutes)
SESSIONS_HIGH_MB = SETTINGS.sessions_high_mb  # past it, idle sessions go early


@dataclass
class Explorer:
    """The page and what its server holds for every visitor: the upload folder, each session's files, sessions."""

    demo: gr.Blocks
    uploads: Uploads
    files: SessionFiles  # the uploads each session named: deleted when its page closes
    sessions: Sessions

    def sweep(self) -> None:
        """Every minute, drop idle sessions if memory is short; every 10 minutes, delete upload-folder files older
        than FILE_TTL_S, dropped uploads included."""
        for minute in itertools.count():
            self.sessions.trim()
            if minute % 10 == 0 and (deleted := self.uploads.sweep(FILE_TTL_S)):
                logging.getLogger("vit_explorer").info("deleted %d upload files over %d s old", deleted, FILE_TTL_S)
            if minute % 10 == 0:
                self.files.prune()
            time.sleep(60)


def build() -> Explorer:
    """The explorer's page over one Service, with the tabs laid out and wired."""
    uploads = Uploads.gradio(tuple(SAMPLES))
    files = SessionFiles(uploads)
    service = Service.start(uploads=uploads)
    internals.install()  # the guard reads the queued events' visitors and abandonment through the adapter
    write_images_whole()  # two visitors' equal maps, written at once, must not cut each other's download short
    with gr.Blocks(title="ViT explorer", delete_cache=(600, FILE_TTL_S)) as demo:
        gr.Markdown(text.INTRO)
        top = Top.layout(service, SESSION_TTL_S)  # the offline notice first, once
        compare = Compare(CompareTab(service), top)
        with gr.Tabs(overflow_behavior="wrap") as tabs:  # every tab in sight at phone width, not behind "⋯"
            with gr.Tab("Compare models", id="compare"):
                compare.layout()
                dataset_panel.build(DatasetTab(service), top.models, top.typed_models, top.weights)
            with gr.Tab("AlterNet (Section 4)", id="alternet"):
                alternet_panel.build(demo, AlterNetTab(CifarLab(service)), top.image)
            with gr.Tab("Paper figures", id="paper"):
                findings_panel.build(PaperTab(PaperFindings(service)), top.image)
            with gr.Tab("Guided tour", id="tour") as tour_page:
                tour_panel.build(TourTab(service), top.state, tabs, tour_page, demo, top.analyzed_photo)
        compare.wire()
        demo.load(None, js=WATCH_PREVIEW)
        demo.load(None, js=SHOW_REFUSALS)
        demo.load(None, js=NAMING_SAMPLES)
        demo.load(None, js=DESCRIBE_PLOTS)
        demo.load(None, js=KEEP_FOCUS)
        sessions = Sessions(demo, files, SESSIONS_HIGH_MB)
        demo.unload(sessions.close)
    return Explorer(demo, uploads, files, sessions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    args = parser.parse_args()
    configure_logging()
    proxies = Proxies()  # the visitor's address is found by the guard, from these proxies only; uvicorn trusts none
    os.environ["FORWARDED_ALLOW_IPS"] = ""
    trusted = ", ".join(map(str, proxies.trusted)) or "nobody"
    logging.getLogger("vit_explorer").info("X-Forwarded-For is believed from: %s", trusted)
    explorer = build()
    threading.Thread(target=explorer.sweep, daemon=True, name="sweep").start()
    internals.calm(explorer.demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=CONCURRENCY)).launch(
        server_name=args.host,
        server_port=args.port,
        css=CSS,
        head=HEAD,
        theme=THEME,
        max_file_size=MAX_UPLOAD,
        show_error=True,
        ssr_mode=False,  # server-side rendering breaks inside a Space's iframe (gradio#12555); the page needs none
        app_kwargs={
            "middleware": [
                Middleware(
                    RequestGuard,
                    uploads=explorer.uploads,
                    queued=internals.queued_visits(explorer.demo),
                    proxies=proxies,
                    files=explorer.files,
                    fill=ApiDefaults.of(explorer.demo),
                )
            ]
        },
    )


if __name__ == "__main__":
    main()
