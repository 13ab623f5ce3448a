"""Typed errors: every failure a user can cause has its own class and a one-line message."""

import re


class EngineError(Exception):
    """Base class for every error the engine raises on bad input or unavailable resources."""


class ImageError(EngineError):
    """The input is not a usable image (unreadable, truncated, empty, too large)."""


class UnknownModelError(EngineError):
    """The model name is neither registered nor a timm model of a supported family (timm_blocks.py)."""


class WeightsUnavailableError(EngineError):
    """Pretrained weights could not be found locally nor downloaded."""


class OfflineWeightsError(WeightsUnavailableError):
    """Pretrained weights of model `name` are not cached and the hub cannot be reached to download them."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


class CheckpointError(EngineError):
    """A checkpoint file is unreadable or does not fit the model it is loaded into."""


ESCAPE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(\x07|\x1b\\)?)?")  # ANSI CSI and OSC sequences
CONTROLS = dict.fromkeys([*range(32), *range(127, 160), *range(0x200B, 0x2010), *range(0x202A, 0x202F), 0xFEFF], " ")


def shown(text: object, limit: int = 60) -> str:
    """A user's string as it may appear in a message or log line: one line without control characters (ANSI
    escapes and bidi marks included), at most `limit` characters."""
    raw = str(text)
    window = raw[: 20 * limit]  # enough to fill `limit` once cleaned (a 5 MB string is not scanned whole)
    clean = " ".join(ESCAPE.sub("", window).translate(CONTROLS).split())
    return clean if len(clean) <= limit and len(raw) == len(window) else clean[: limit - 1] + "…"
