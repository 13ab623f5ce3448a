"""What a framework adapter reads of its framework, checked against the installed version: each adapter
(app/server/gradio_adapter.py, app/server/streamlit_adapter.py) lists the (class, attribute) pairs it uses in `USED`.

    missing(USED)   # ['Class.attribute' for each one a newer release has moved or renamed]
"""

from __future__ import annotations

import inspect
import re


def missing(used: tuple[tuple[type, str], ...]) -> list[str]:
    """The pairs of `used` the installed framework does not have, as 'Class.attribute'."""
    return [f"{owner.__name__}.{name}" for owner, name in used if not has(owner, name)]


def has(owner: type, name: str) -> bool:
    """Whether `owner` has attribute `name`: a class attribute, a dataclass field, or one its methods set (in
    __init__ or in another method, as Gradio's Blocks sets its queue)."""
    if hasattr(owner, name) or name in getattr(owner, "__dataclass_fields__", {}):
        return True
    try:
        source = inspect.getsource(owner)
    except (OSError, TypeError):
        return False
    return re.search(rf"self\.{name}\s*[:=]", source) is not None
