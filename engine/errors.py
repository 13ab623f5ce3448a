"""Typed errors: every failure a user can cause has its own class and a one-line message."""


class EngineError(Exception):
    """Base class for every error the engine raises on bad input or unavailable resources."""


class ImageError(EngineError):
    """The input is not a usable image (unreadable, truncated, empty, too large)."""


class UnknownModelError(EngineError):
    """The model name is neither registered nor a timm model of a supported family (timm_blocks.py)."""


class WeightsUnavailableError(EngineError):
    """Pretrained weights could not be found locally nor downloaded."""


class CheckpointError(EngineError):
    """A checkpoint file is unreadable or does not fit the model it is loaded into."""


def shown(text: object, limit: int = 60) -> str:
    """A user's string as it may appear in a message or log line: one line, at most `limit` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
