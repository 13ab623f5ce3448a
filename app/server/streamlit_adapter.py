"""Streamlit's internals, used in this one module: the page run's script context (to draw progress from the model
thread and to read what the page asked for since), the page sessions alive, and the uploads and drawn images each
session holds. A Streamlit upgrade that moves one of them fails tests/test_framework_internals.py, which names it
(`missing`).

    context = script_context()          # in the page's run; None outside one
    asked(context)                      # ("rerun", the widgets' states it asks for), ("stop", []) or (None, [])
    held_bytes(), session_bytes(session), forget(session)
"""

from __future__ import annotations

import threading
from typing import Any

from streamlit import config, runtime
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.runtime import Runtime
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequests, ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

from app.server import adapters

# what this module reads: (class, attribute) pairs, checked against the pinned Streamlit by `missing`
USED = (
    (ScriptRunContext, "script_requests"),
    (ScriptRunContext, "session_id"),
    (ScriptRunContext, "session_state"),
    (ScriptRequests, "_state"),
    (ScriptRequests, "_rerun_data"),
    (Runtime, "is_active_session"),
    (Runtime, "uploaded_file_mgr"),
    (Runtime, "media_file_mgr"),
    (MemoryUploadedFileManager, "file_storage"),
    (MemoryUploadedFileManager, "get_stats"),
    (MemoryUploadedFileManager, "remove_session_files"),
    (MediaFileManager, "clear_session_refs"),
    (MediaFileManager, "remove_orphaned_files"),
)


def missing() -> list[str]:
    """The internals this module reads that the installed Streamlit does not have ('Class.attribute')."""
    return adapters.missing(USED)


def script_context() -> ScriptRunContext | None:
    """The page run's script context, in the page's run (None outside one)."""
    return get_script_run_ctx()


def attach(context: ScriptRunContext | None) -> None:
    """Let the calling thread (the model thread) draw on the page of `context`."""
    add_script_run_ctx(threading.current_thread(), context)


def session_id() -> str:
    """The page session of the run in progress ('' outside one)."""
    context = get_script_run_ctx()
    return context.session_id if context is not None else ""


def session_alive(session: str) -> bool:
    """Whether page session `session` is still connected (or kept for a reconnect)."""
    return runtime.exists() and runtime.get_instance().is_active_session(session)


def asked(context: ScriptRunContext | None) -> tuple[str | None, list[Any]]:
    """What the session asked for since `context`'s run began (Streamlit keeps the request, with the widgets'
    states, until the script reaches its next element): ('rerun', those widget states), ('stop', []) or
    (None, []) for nothing."""
    requests = getattr(context, "script_requests", None)
    state = getattr(requests, "_state", ScriptRequestType.CONTINUE)
    if state == ScriptRequestType.STOP:
        return "stop", []
    if state != ScriptRequestType.RERUN:
        return None, []
    widgets = getattr(getattr(getattr(requests, "_rerun_data", None), "widget_states", None), "widgets", [])
    return "rerun", list(widgets)


def widget_states(context: ScriptRunContext) -> list[Any]:
    """The widgets' states of the run in progress."""
    return list(context.session_state.get_widget_states())


def held_bytes() -> int:
    """Bytes of every upload Streamlit holds."""
    stats = runtime.get_instance().uploaded_file_mgr.get_stats()
    return sum(stat.byte_length for family in stats.values() for stat in family)


def session_bytes(session: str) -> int:
    """Bytes of the uploads page session `session` holds (0 before the server runs)."""
    if not runtime.exists():
        return 0
    files = dict(runtime.get_instance().uploaded_file_mgr.file_storage.get(session, {}))
    return sum(len(file.data) for file in files.values())


def upload_sessions() -> list[str]:
    """The page sessions holding uploads (some may never have run their page to the end)."""
    return list(runtime.get_instance().uploaded_file_mgr.file_storage) if runtime.exists() else []


def forget(sessions: list[str]) -> None:
    """Let go of the uploads and drawn images of `sessions` (their pages closed)."""
    server = runtime.get_instance()
    for session in sessions:
        server.uploaded_file_mgr.remove_session_files(session)
        server.media_file_mgr.clear_session_refs(session)
    server.media_file_mgr.remove_orphaned_files()


def reconnect_seconds() -> float:
    """How long a closed page's session is kept for a reconnect (server.disconnectedSessionTTL)."""
    return float(config.get_option("server.disconnectedSessionTTL"))


def running() -> bool:
    """Whether a Streamlit server runs in this process."""
    return runtime.exists()
