"""The Streamlit server's log, read while a real Chromium uses it: a refused upload is one line, however often
Streamlit reruns the page, laid out as a refusal line of the Gradio server (app/server/logs.py), its name cut short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gradio_client import handle_file
from gradio_client.exceptions import AppError
from playwright.sync_api import expect

from tests.conftest import Server, streamlit_settled
from tests.helpers.gradio_http import gradio_client

TIMEOUT_MS = 300_000
NAME = "n" * 100 + ".png"  # a user's string: at most 60 characters of it in a message or a log line
CUT = "n" * 59 + "…"
RERUNS = ["AlterNet (Section 4)", "Paper figures", "Compare models"]  # each click reruns the whole script


def refusals(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if "refused" in line and "nnnnnnnnnn" in line]


def layout(line: str) -> str:
    """A log line's head (time, level, logger) with its digits masked: what every refusal line shares."""
    return re.sub(r"\d", "9", line.partition(": ")[0])


def test_a_refused_upload_is_one_line_laid_out_as_gradios(page, streamlit: Server, server: Server, tmp_path: Path):
    bad = tmp_path / NAME
    bad.write_text("not an image")
    with pytest.raises(AppError, match="not an image"):  # the same file refused by the Gradio server's photo input
        gradio_client(server.url).predict(
            handle_file(str(bad)), ["vit_cifar"], "random", "inferno", 0.6, True, api_name="/run"
        )
    (gradio,) = refusals(server.log)

    page.goto(streamlit.url)
    page.get_by_role("button", name="Analyze").wait_for(timeout=TIMEOUT_MS)
    page.locator("input[type=file]").first.set_input_files(str(bad))  # its chip shows the name shortened
    page.get_by_text(f"{CUT}: not an image").first.wait_for(timeout=TIMEOUT_MS)
    streamlit_settled(page)
    for tab in RERUNS:
        page.get_by_role("tab", name=tab).click()
        streamlit_settled(page)
    page.get_by_role("button", name="Analyze").click()  # refused on the page again, not logged again
    streamlit_settled(page)
    # said under the picker, and by Analyze (the AlterNet tab says it too, when it is open)
    expect(page.get_by_text(f"{CUT}: not an image")).to_have_count(2, timeout=TIMEOUT_MS)

    (line,) = refusals(streamlit.log)
    assert f"refused a photo Streamlit could not read: {CUT}: not an image" in line and "n" * 60 not in line
    assert layout(line) == layout(gradio) == "9999-99-99 99:99:99,999 WARNING vit_explorer", (line, gradio)
    assert "Traceback" not in streamlit.log.read_text(), (
        f"the session's Streamlit server logged a fault: {streamlit.log}"
    )
