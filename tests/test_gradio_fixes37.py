"""Issue 37's Gradio follow-ups in a real headless Chromium: an error toast is plain text (a typed spec's markup
is not drawn), a bad spec is logged once, an error toast does not outlive a later successful Analyze, and a
refused file says so on the status line."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.conftest import Server
from tests.test_screen_browser import TIMEOUT_MS

MARKUP_SPEC = "s1:1,s5:2,s3:9,foo<b>x</b><img src=x onerror=alert(1)>"


def alternet_spec(page, server_url: str, typed: str) -> None:
    """The AlterNet tab with `typed` in its spec box (not applied)."""
    page.goto(server_url)
    page.get_by_role("tab", name="AlterNet (Section 4)").click()
    page.locator("#alternet-spec textarea, #alternet-spec input").first.fill(typed)


def error_toast(page):
    toast = page.locator(".toast-body.error").last
    expect(toast).to_be_visible(timeout=TIMEOUT_MS)
    return toast


def test_a_spec_with_markup_is_shown_as_text_in_the_error_toast(page, server_url: str):
    alternet_spec(page, server_url, MARKUP_SPEC)
    page.locator("#alternet-average").click()
    toast = error_toast(page)
    assert toast.locator("b, img").count() == 0, toast.inner_html()
    assert "foo<b>x</b><img src=x" in toast.inner_text()


def test_the_spec_format_is_shown_whole_in_the_error_toast(page, server_url: str):
    alternet_spec(page, server_url, "s1:1,s5:2,s3:9,foo")
    page.locator("#alternet-average").click()
    shown = error_toast(page).inner_text()
    assert "expected s<stage>:<block>, 1-based, e.g. 's3:6'" in shown, shown


def test_a_bad_spec_is_logged_once(page, server: Server):
    typed = "zz37once"  # named at the start of the logged line (which is cut at 200 characters)
    alternet_spec(page, server.url, typed)
    box = page.locator("#alternet-spec textarea, #alternet-spec input").first
    box.press("Enter")
    expect(page.locator("#alternet-spec-problem")).to_contain_text(typed, timeout=TIMEOUT_MS)
    page.locator("#alternet-average").click()
    error_toast(page)
    page.wait_for_timeout(2000)  # every listener has answered
    logged = [line for line in server.log.read_text().splitlines() if "refused" in line and f"'{typed}'" in line]
    assert len(logged) == 1, logged
