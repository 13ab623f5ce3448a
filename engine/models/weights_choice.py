"""Which weights a model is built with, as a typed value resolved once where a request comes in:

    Weights.pretrained()                the model's own trained weights (timm's from the hub; a CIFAR
                                        model's bundled checkpoint)
    Weights.random(seed=0)              seeded random weights, always labelled so
    Weights.file("runs/x.safetensors")  a checkpoint file (with a JSON sidecar it rebuilds its architecture)

`Weights.parse` reads the command line's and scripts' spelling ('pretrained', 'random', or a path); a
server never parses paths from the network (app.backend.service.Service.network_weights).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path


class Source(Enum):
    PRETRAINED = "pretrained"
    RANDOM = "random"
    FILE = "file"


@dataclass(frozen=True)
class Weights:
    """A model's weights: where they come from, the seed of random ones, the file of a checkpoint."""

    source: Source
    seed: int = 0
    path: Path | None = None

    @classmethod
    def pretrained(cls) -> Weights:
        return cls(Source.PRETRAINED)

    @classmethod
    def random(cls, seed: int = 0) -> Weights:
        return cls(Source.RANDOM, seed)

    @classmethod
    def file(cls, path: str | Path) -> Weights:
        return cls(Source.FILE, path=Path(path))

    @classmethod
    def parse(cls, text: str | Weights, seed: int = 0) -> Weights:
        """'pretrained', 'random' (with `seed`) or a checkpoint path; a Weights is returned as it is."""
        if isinstance(text, Weights):
            return text
        if text == Source.PRETRAINED.value:
            return cls.pretrained()
        if text == Source.RANDOM.value:
            return cls.random(seed)
        return cls.file(text)

    @property
    def is_random(self) -> bool:
        return self.source is Source.RANDOM

    @property
    def label(self) -> str:
        """A short name for messages: 'pretrained', 'random' or the checkpoint's file name (never its folder)."""
        return self.path.name if self.source is Source.FILE else self.source.value

    def __str__(self) -> str:
        """The command line's spelling: 'pretrained', 'random' or the path."""
        return str(self.path) if self.source is Source.FILE else self.source.value
