"""The values an API caller may leave off: Gradio answers a call that sends fewer values than its function has
inputs with "needed: 6, got: 5", so a script written before a parameter was added would break. Each endpoint's
trailing parameters that have a Python default are read from its function here (the endpoints listed by
app.server.gradio_adapter), for the server's RequestGuard to fill in.

    fill = ApiDefaults.of(demo)        # {"analyze": Trailing(needed=6, defaults=("", "", None, False)), ...}
    fill("analyze", [photo, ["resnet50"]])   # the two values sent, then the four defaults
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import gradio as gr

from app.server.gradio_adapter import endpoints

SPECIAL = ("request", "progress")  # parameters Gradio fills itself (gr.Request, gr.Progress), never inputs


@dataclass(frozen=True)
class Trailing:
    """An endpoint's number of inputs and the defaults of its last ones."""

    needed: int
    defaults: tuple

    def filled(self, values: list) -> list:
        """`values` with the defaults of those left off; as they are when too few are sent to fill."""
        missing = self.needed - len(values)
        if missing <= 0 or missing > len(self.defaults):
            return values
        return [*values, *self.defaults[len(self.defaults) - missing :]]


def trailing(fn, inputs: int) -> Trailing | None:
    """`fn`'s inputs and the defaults of its trailing ones; None where it has none to give."""
    try:
        parameters = [p for p in inspect.signature(fn).parameters.values() if p.name not in SPECIAL][:inputs]
    except (TypeError, ValueError):  # a builtin or a partial without a signature
        return None
    defaults = []
    for parameter in reversed(parameters):
        if parameter.default is inspect.Parameter.empty:
            break
        defaults.insert(0, parameter.default)
    return Trailing(inputs, tuple(defaults)) if defaults and len(parameters) == inputs else None


@dataclass(frozen=True)
class ApiDefaults:
    """Every named endpoint of an app whose trailing inputs have defaults, by API name."""

    endpoints: dict[str, Trailing]

    @classmethod
    def of(cls, demo: gr.Blocks) -> ApiDefaults:
        found = {}
        for api, fn, inputs in endpoints(demo):
            if (ends := trailing(fn, inputs)) is not None:
                found[api] = ends
        return cls(found)

    def __call__(self, api: str, values: list) -> list:
        """The values a call to `api` sent, with the defaults of those it left off."""
        ends = self.endpoints.get(api)
        return values if ends is None else ends.filled(values)
