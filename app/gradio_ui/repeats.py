"""Events the page would send twice at once, dropped in the browser before they reach the server: a double click
on Analyze (clicks made while a photo uploads are all sent together once it is up) and the photo's change, which
Gradio's image can report twice for one upload. Each would otherwise hold one of the page's few places in the
server's queue (app.server.middleware) while the first runs, and a third request of the page would be refused."""

from __future__ import annotations

import json


def dropping_repeats(name: str, seconds: float = 1.0) -> str:
    """An event's `js`: its inputs passed on, unless the same inputs were sent under `name` less than `seconds`
    ago; then the event is never sent (its promise never settles: a rejection would mark its outputs as failed)."""
    return f"""(...inputs) => {{
        const sent = (window.__vitSent = window.__vitSent || {{}}), key = JSON.stringify(inputs), now = Date.now();
        const last = sent[{json.dumps(name)}];
        if (last && last.key === key && now - last.at < {round(seconds * 1000)}) return new Promise(() => {{}});
        sent[{json.dumps(name)}] = {{key, at: now}};
        return inputs;
    }}"""


def writing(value: object) -> str:
    """An event's `js` writing `value` (a text the page model wrote, as JSON) to its output, in the browser."""
    return f"() => {json.dumps(value)}"
