"""Photos Streamlit's st.image cannot write (16-bit, 32-bit integer and float), analyzed in Streamlit as in Gradio,
and a photo over the 50-megapixel limit refused in one line, with no exception on the page (Streamlit's AppTest)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from app.views.texts import literal
from tests.helpers.streamlit_apptest import SCRIPT, TIMEOUT_S

pytestmark = pytest.mark.usefixtures("offline")  # the hub unreachable, as on CI (tests/conftest.py)

MODEL = "vit_cifar"  # the smallest bundled model: these tests are about the photo, not the models


def encoded(pixels: np.ndarray, fmt: str) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, fmt)
    return out.getvalue()


def ramp(dtype: type, top: float) -> np.ndarray:
    """A 96x128 diagonal ramp from 0 to `top`, past 8 bits: a photo Pillow opens in a mode st.image cannot write."""
    rows, columns = np.indices((96, 128))
    return ((rows + columns) / (95 + 127) * top).astype(dtype)


PHOTOS = {
    "gray16.png": ("I;16", encoded(ramp(np.uint16, 65535), "PNG")),
    "int32.tif": ("I", encoded(ramp(np.int32, 65535), "TIFF")),
    "float.tif": ("F", encoded(ramp(np.float32, 1000) - 500, "TIFF")),
}


def uploaded(name: str, data: bytes) -> AppTest:
    """The page with `data` uploaded as `name` and MODEL alone picked."""
    at = AppTest.from_file(SCRIPT, default_timeout=TIMEOUT_S).run()
    at.multiselect(key="models").set_value([MODEL])
    return at.file_uploader(key="upload").set_value((name, data, "application/octet-stream")).run()


@pytest.mark.parametrize("name", list(PHOTOS))
def test_a_photo_in_a_mode_st_image_cannot_write_is_previewed_and_analyzed(name: str):
    mode, data = PHOTOS[name]
    assert Image.open(io.BytesIO(data)).mode == mode
    at = uploaded(name, data)
    assert not at.exception and not at.error
    assert literal(name) in [caption for image in at.image for caption in image.captions]  # the photo's preview
    at.button(key="analyze").click().run()
    assert not at.exception and not at.error
    assert at.session_state["photo_name"] == name and [run.result.name for run in at.session_state["runs"]] == [MODEL]
    assert any("Fourier analysis" in m.value for m in at.markdown)


def test_a_photo_over_the_megapixel_limit_is_refused_in_one_line():
    data = encoded(np.zeros((6500, 8000), np.uint16), "PNG")  # 52 megapixels, 16-bit, in about 100 KB
    at = uploaded("huge.png", data)
    line = "huge.png: 8000x6500 is 52,000,000 pixels, over the limit of 50,000,000 (50 megapixels)"
    assert not at.exception and [e.value for e in at.error] == [line]  # under the picker
    at.session_state["tab"] = "AlterNet (Section 4)"  # only the open tab is drawn
    at.run()
    assert not at.exception and [e.value for e in at.error] == [line, line]  # and in the AlterNet tab
    at.session_state["tab"] = "Compare models"
    at.run()
    at.button(key="analyze").click().run()
    assert not at.exception and {e.value for e in at.error} == {line} and not at.session_state["runs"]
