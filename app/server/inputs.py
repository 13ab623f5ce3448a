"""What a request may hold, checked before it reaches a function: model lists are lists of short names, JSON is
bounded in size and nesting, and every file path it names is found (`file_paths`) to be checked as an upload."""

from __future__ import annotations

import re

from app.server.refusal import refuse
from engine.errors import shown

MODEL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,120}")


def model_names(value: object, limit: int) -> list[str]:
    """A list of model names as sent over the network: a list (a lone string is one name, not letters),
    at most `limit`, each a short timm-style name."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise refuse("models must be a list of model names", "models argument of the wrong type")
    names = [n.strip() for n in names if n.strip()]
    if len(names) > limit:
        raise refuse(f"pick at most {limit} models (got {len(names)})", "too many models")
    for name in names:
        if not MODEL_NAME.fullmatch(name):
            raise refuse(
                f"'{shown(name)}' is not a model name (letters, digits, '_', '.', '-'; at most 120)",
                "malformed model name",
            )
    return names


MAX_JSON_BYTES = 5 * 2**20


MAX_JSON_DEPTH = 32  # Gradio's own bodies nest 5 deep


def file_paths(data: object) -> list[object]:
    """Every `path` value of a file payload ({"path": ...}) anywhere in a request's JSON data."""
    if isinstance(data, dict):
        found = [data["path"]] if "path" in data else []
        return found + [p for value in data.values() for p in file_paths(value)]
    if isinstance(data, list):
        return [p for value in data for p in file_paths(value)]
    return []


def depth(data: object) -> int:
    """How deeply JSON data nests lists and objects (a scalar: 0), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest
