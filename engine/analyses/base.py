"""The contract every analysis keeps, in captum's manner: an object per method, one call to a typed result.

    class MyAnalysis(ModelAnalysis):
        def attribute(self, images, labels=None, progress=None) -> MyResult:
            x = self.inputs(images)            # files/PIL/arrays through the eval transform, or a batch as is
            y = self.targets(labels, len(x))   # int64 class indices, checked against the images
            logits = self.logits(x)            # in batches of self.batch_size, each pass counted
            return MyResult(...)               # a dataclass with to_json()

Bad arguments raise EngineError (the front ends show its message); `progress(done, total)` reports
long work; every forward pass through the model goes through `forward`, which counts it in
`model.forward_passes` (the app's cache and the tests read it).
"""

from __future__ import annotations

import functools
import threading
from abc import ABC, abstractmethod
from typing import Callable, Protocol, Sequence

import numpy as np
import torch

from ..data.images import ImageInput, load_image
from ..errors import EngineError
from ..models.registry import LoadedModel

Progress = Callable[[int, int], None]
Images = Sequence[ImageInput] | torch.Tensor
Labels = Sequence[int] | np.ndarray | torch.Tensor


Hook = Callable[..., object]


def owned(hook: Hook) -> Hook:
    """`hook` acting only in forward passes made by the thread that registered it: a server's other jobs, which take
    turns on the same cached models at batch boundaries, pass through it untouched."""
    owner = threading.get_ident()

    @functools.wraps(hook)
    def run(*args, **kwargs):
        return hook(*args, **kwargs) if threading.get_ident() == owner else None

    return run


_EXPLICIT = threading.Lock()


def explicit_attention(attn: torch.nn.Module) -> None:
    """Run timm attention module `attn` on its explicit path (q k^T, softmax, attn_drop), where the softmax can be
    read, until as many `fused_attention` calls; counted, so that one job ending does not switch it back under
    another that still reads it."""
    with _EXPLICIT:
        if not getattr(attn, "_explicit_users", 0):
            attn._was_fused = attn.fused_attn
        attn._explicit_users = getattr(attn, "_explicit_users", 0) + 1
        attn.fused_attn = False


def fused_attention(attn: torch.nn.Module) -> None:
    """Undo one `explicit_attention`; the last one restores the module's own path."""
    with _EXPLICIT:
        attn._explicit_users -= 1
        if not attn._explicit_users:
            attn.fused_attn = attn._was_fused


class Result(Protocol):
    """What an analysis returns: a dataclass that can be stored as JSON."""

    def to_json(self) -> dict: ...


class ModelAnalysis(ABC):
    """One loaded model and the input handling, batching and pass counting all analyses share."""

    min_batch_size = 1

    def __init__(self, model: LoadedModel, batch_size: int = 100) -> None:
        if batch_size < self.min_batch_size:
            raise EngineError(
                f"{type(self).__name__}: batch_size must be at least {self.min_batch_size}, not {batch_size}"
            )
        self.model, self.batch_size = model, batch_size

    @abstractmethod
    def attribute(self, images: Images, labels: Labels | None = None, progress: Progress | None = None) -> Result:
        """The analysis of `images` (and their `labels`, where it needs them)."""

    def inputs(self, images: Images, model: LoadedModel | None = None) -> torch.Tensor:
        """`images` as `model`'s (default: this one's) input batch: a preprocessed (B, 3, H, W) tensor as is,
        files/PIL/arrays through its eval transform."""
        model = model or self.model
        if isinstance(images, torch.Tensor):
            if images.dim() != 4 or images.shape[1] != 3:
                raise EngineError(f"a preprocessed batch has shape (B, 3, H, W), not {tuple(images.shape)}")
        if len(images) == 0:
            raise EngineError(f"{type(self).__name__} needs at least one image")
        if isinstance(images, torch.Tensor):
            return images
        return torch.stack([model.transform(load_image(image)) for image in images])

    def targets(self, labels: Labels | None, count: int) -> torch.Tensor:
        """`labels` as int64 class indices, one per image, none negative."""
        if labels is None:
            raise EngineError(f"{type(self).__name__} needs a class label for every image")
        y = torch.as_tensor(np.asarray(labels.cpu() if isinstance(labels, torch.Tensor) else list(labels)))
        y = y.long().reshape(-1)
        if len(y) != count:
            raise EngineError(f"{count} images but {len(y)} labels")
        if count and int(y.min()) < 0:
            raise EngineError(f"label {int(y.min())} is out of range: labels are class indices from 0")
        return y

    def forward(self, x: torch.Tensor, model: LoadedModel | None = None) -> torch.Tensor:
        """One counted forward pass of `model` (default: this one) on `x`, moved to its device."""
        model = model or self.model
        out = model.module(x.to(model.device, non_blocking=True))
        model.forward_passes += 1
        return out

    @torch.inference_mode()
    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """(B, classes) float32 logits on the CPU, in batches of `batch_size`."""
        return torch.cat(
            [self.forward(x[s : s + self.batch_size]).float().cpu() for s in range(0, len(x), self.batch_size)]
        )

    def check_labels(self, y: torch.Tensor, classes: int) -> None:
        """EngineError when a label is past the model's classes."""
        if len(y) and int(y.max()) >= classes:
            raise EngineError(f"label {int(y.max())} is out of range: {self.model.name} has {classes} classes")
