"""The Streamlit server as served (app/streamlit_server.py) in a real Chromium: a closed page's session lets go of
its uploads, and an upload past its address's bytes a minute is refused, the page saying why in one line."""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from app.views.texts import LABEL
from tests.conftest import streamlit_server, streamlit_settled, streamlit_upload

LET_GO = re.compile(r"let go of 1 closed page session\(s\): ([\d.]+) MB of uploads")
SETTINGS = {
    "VIT_EXPLORER_UPLOAD_MB_PER_MINUTE": "2",  # one 1.4 MB photo a minute
    "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "2",  # a closed page is kept 2 s for a reconnect
    "VIT_EXPLORER_SESSION_SWEEP_S": "1",
}


@pytest.fixture(scope="module")
def served(output_dir: Path):
    with streamlit_server(output_dir / "streamlit-serving.log", SETTINGS) as started:
        yield started


def noise(path: Path, seed: int) -> Path:
    """A PNG of 1.4 MB that does not compress."""
    pixels = np.random.default_rng(seed).integers(0, 255, (700, 700, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path)
    return path


def test_a_closed_page_lets_go_and_an_upload_past_the_minute_is_refused(page, served, tmp_path: Path):
    context = page.context.browser.new_context(viewport={"width": 1440, "height": 1000})
    first, second = context.new_page(), context.new_page()  # the same address
    for opened in (first, second):  # both ready before the first upload: the minute is not spent loading a page
        opened.goto(served.url)
        opened.get_by_role("button", name=LABEL.analyze).wait_for(timeout=300_000)
    streamlit_upload(first, noise(tmp_path / "first.png", 0))
    uploaded = time.monotonic()
    first.close()
    deadline = time.monotonic() + 50
    while not (found := LET_GO.search(served.log.read_text())) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert found, "the closed page's session was not let go of"
    assert float(found[1]) >= 1.3  # its photo's bytes

    second.locator("input[type=file]").first.set_input_files(str(noise(tmp_path / "second.png", 1)))
    assert time.monotonic() - uploaded < 60, "the second upload came after the minute: the test ran too slowly"
    expect(second.get_by_text("status code 429")).to_be_visible(timeout=60_000)
    second.get_by_text("Camera").click()  # any change runs the page again: it says why the upload was refused
    streamlit_settled(second, 60_000)
    refusal = second.get_by_text(f"{LABEL.upload_refused}: too many uploads from your address")
    expect(refusal).to_be_visible(timeout=60_000)
    assert "at most 2 MB a minute" in refusal.inner_text()
    context.close()
