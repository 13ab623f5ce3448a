"""Framework internals are used in one adapter per framework (app/server/gradio_adapter.py,
app/server/streamlit_adapter.py, app/server/zero_gpu.py for ZeroGPU's `spaces`, app/exports/export_browser.py for
kaleido), each listing what it reads; a pinned framework that moves one fails here by name, and no other module
reaches into a framework."""

from __future__ import annotations

import contextvars
import inspect
import re

import gradio as gr
import pytest
from gradio.queueing import Queue

from app.exports import export_browser
from app.server import gradio_adapter as gradio_internals
from app.server import streamlit_adapter as streamlit_internals
from tests.conftest import ROOT

ADAPTERS = {
    "app/server/gradio_adapter.py",
    "app/server/streamlit_adapter.py",
    "app/server/zero_gpu.py",
    "app/exports/export_browser.py",
}
INTERNALS = re.compile(
    r"LocalContext|\b_queue\b|state_holder|event_queue_per_concurrency_id|active_jobs|\.fns\b|get_upload_folder"
    r"|sleep_when_free|script_run_ctx|script_requests|_rerun_data|uploaded_file_mgr|media_file_mgr|file_storage|is_active_session"
    r"|from (gradio|streamlit)\.\w|import (gradio|streamlit)\.\w|streamlit import (config|runtime)|^import spaces"
    r"|^from (kaleido|choreographer) import|calc_fig",
    re.M,
)


@pytest.mark.parametrize(
    "adapter", [gradio_internals, streamlit_internals, export_browser], ids=["gradio", "streamlit", "kaleido"]
)
def test_every_internal_an_adapter_reads_is_in_the_pinned_framework(adapter, monkeypatch):
    assert adapter.missing() == []
    owner = adapter.USED[0][0]
    monkeypatch.setattr(adapter, "USED", (*adapter.USED, (owner, "moved_in_a_later_release")))
    assert adapter.missing() == [f"{owner.__name__}.moved_in_a_later_release"]  # named when it moves


def test_no_module_but_the_adapters_reaches_into_a_framework():
    found = {}
    for path in sorted((ROOT / "app").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name not in ADAPTERS and (hits := sorted(set(m[0] for m in INTERNALS.finditer(path.read_text())))):
            found[name] = hits
    assert found == {}, found


def test_the_guard_learns_a_queued_events_visitor_and_abandonment_from_the_gradio_adapter():
    from app.server import context

    before = (context.FRAMEWORK.stopped, context.FRAMEWORK.visitor)
    try:
        gradio_internals.install()
        assert context.FRAMEWORK.stopped is gradio_internals.event_gone
        outside = contextvars.Context()  # outside any request (other tests set VISITOR in this thread)
        assert outside.run(context.visitor) == "local" and outside.run(context.FRAMEWORK.stopped) is None
    finally:
        context.FRAMEWORK.stopped, context.FRAMEWORK.visitor = before


def test_the_gradio_queue_looks_for_work_as_the_adapter_says():
    """Gradio's queue sleeps on the two attributes `calm` sets (bench/idle_server.py measures what they save)."""
    queue = gradio_internals.queue_of(gradio_internals.calm(gr.Blocks().queue()))
    assert (queue.sleep_when_free, queue.progress_update_sleep_when_free) == (
        gradio_internals.QUEUE_LOOK_S,
        gradio_internals.PROGRESS_LOOK_S,
    )
    assert "asyncio.sleep(self.sleep_when_free)" in inspect.getsource(Queue.start_processing)
    assert "asyncio.sleep(self.progress_update_sleep_when_free)" in inspect.getsource(Queue.start_progress_updates)
