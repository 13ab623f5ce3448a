"""The photo in Streamlit: an upload, the camera's, or a sample, previewed as it will be analyzed, or named as
unreadable in one line (and one log line) once per photo and session."""

from __future__ import annotations

import hashlib

import streamlit as st
from PIL import Image

from app.backend.service import SAMPLES
from app.server.refusal import refuse
from app.server.streamlit_guard import refused_upload
from app.server.uploads import UploadLimits
from app.streamlit_ui.resources import service
from app.tabs.compare import not_an_image
from app.views import alt_text
from app.views import texts as text
from app.views.texts import LABEL, literal
from engine import errors

state = st.session_state


PREVIEW_WIDTH = 200  # pixels: the photo's preview, made once per photo (st.image would resize a wider one each rerun)


def photo(session: str) -> tuple[bytes, str]:
    """The chosen photo as (bytes, name): an upload, the camera, or a sample; shown as it will be analyzed
    (the sample box is set aside while an upload or the camera's photo is in use), or named as unreadable."""
    left, right = st.columns([2, 3])
    upload = left.file_uploader(LABEL.photo, type=None, key="upload", help=upload_limits())
    if refused := refused_upload(session):
        left.error(f"{LABEL.upload_refused}: {refused}.")
    camera = left.camera_input("Or take one", key="camera") if left.toggle("Camera", key="use_camera") else None
    own = upload if upload is not None else camera
    # the preview beside the sample box, not under it: the row is shorter, and the tabs start on the first screen
    pick, shown = right.columns([3, 2])
    sample = pick.selectbox(LABEL.sample, [p.name for p in SAMPLES], index=0, key="sample", disabled=own is not None)
    if own is not None:
        picture = own.getvalue(), upload.name if upload is not None else "camera.jpg"
        pick.caption(f"Using **{literal(picture[1])}**; remove it to use a sample photo.")
    else:
        picture = next(p for p in SAMPLES if p.name == sample).read_bytes(), sample
    problem, preview = checked_photo(picture)
    if problem:
        pick.error(problem)
    else:
        shown.image(preview, caption=literal(picture[1]), width=PREVIEW_WIDTH, alt=alt_text.photo(picture[1]))
    return picture


def upload_limits() -> str:
    """The uploader's help: the limits a refused upload passed, in numbers."""
    minute_mb = UploadLimits().per_minute / 2**20
    return text.UPLOAD_LIMITS.format(file_mb=st.get_option("server.maxUploadSize"), minute_mb=f"{minute_mb:.0f}")


def unreadable(picture: tuple[bytes, str]) -> str | None:
    """Why the photo cannot be analyzed (None: it can); see checked_photo."""
    return checked_photo(picture)[0]


def checked_photo(picture: tuple[bytes, str]) -> tuple[str | None, Image.Image | None]:
    """Why the photo cannot be analyzed (None: it can) and, when it can, its preview, decoded and refused (one log
    line) once per photo and session, however often the page reruns."""
    checked = state.setdefault("photo_checked", {})
    found = digest(picture[0])
    if found not in checked:
        checked.clear()
        checked[found] = decoded(picture)
        if checked[found][0]:
            refuse(checked[found][0], "a photo Streamlit could not read")
    return checked[found]


def decoded(picture: tuple[bytes, str]) -> tuple[str | None, Image.Image | None]:
    """The photo's problem, or its preview as the engine decodes it for analysis (16-bit, 32-bit and float images
    made 8-bit RGB: st.image cannot encode those modes), PREVIEW_WIDTH pixels wide at most."""
    name = errors.shown(picture[1])
    try:  # within the server's pixel budget, as the analysis decodes it
        preview = service().picture(picture[0], name)
    except errors.ImageError as exc:  # the engine's line, naming the file (too large, truncated, ...)
        return str(exc), None
    except (errors.EngineError, ValueError, OSError):
        return not_an_image(name), None
    preview.thumbnail((PREVIEW_WIDTH, preview.height))
    return None, preview


def digest(photo: bytes) -> str:
    return hashlib.sha1(photo).hexdigest()
