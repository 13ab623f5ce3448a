"""The memory one attribution map needs, known before it runs, and its internal batch sized to a budget.

    need = footprint(model)                          # bytes per image, traced once without computing anything
    batch = sized_batch(IntegratedGradients(model), need, budget)   # or TooLarge: what would fit instead

A map's memory beyond the weights is its internal batch times what one image costs: for the gradient methods
(Saliency, SmoothGrad, Integrated Gradients, Grad-CAM, Gradient x attention) the activations autograd keeps for
the backward pass, for Occlusion (no gradients) the peak of a forward pass alone, plus a fixed allowance for the
libraries' scratch space. What one image keeps is counted on one real forward pass of one black image, each
saved activation dropped as soon as it is counted.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time
from dataclasses import dataclass

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from .analyses.attributions import Estimate, GradientAttention, Occlusion, estimate, model_input_size
from .errors import EngineError
from .registry import LoadedModel

MB = 2**20
SCRATCH = 160 * MB  # captum's copies, oneDNN scratch and allocator slack: 100-140 MB measured on ViT-Ti and ResNet-18
FORWARD_LIVE = 4  # a forward pass without gradients holds at most a few of its largest activations at once


class TooLarge(EngineError):
    """A map that needs more memory than the request's budget, even one image at a time."""


@dataclass(frozen=True)
class Footprint:
    """What one image costs a model: `saved` bytes kept for a backward pass, `forward` bytes at the peak of a
    forward pass alone; and the model's `parameters`, `weight_bytes` and input `side` (for messages)."""

    saved: int
    forward: int
    parameters: int
    weight_bytes: int
    side: int
    seconds: float = 0.0  # one image's forward pass, as timed here when it was traced


def footprint(model: LoadedModel) -> Footprint:
    """`model`'s memory per image, from one forward pass of one black image whose saved activations are counted
    and dropped at once (so it costs a forward pass's time and memory, not a backward's)."""
    own = {t.untyped_storage().data_ptr() for t in [*model.module.parameters(), *model.module.buffers()]}
    alive: dict[int, StorageWeakRef] = {}
    sizes: list[int] = []

    def pack(tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key in own or (key in alive and not alive[key].expired()):  # a weight, or saved already
            return None
        alive[key] = StorageWeakRef(storage)
        sizes.append(storage.nbytes())
        return None  # never unpacked: no backward pass follows

    side = model_input_size(model)
    x = torch.zeros(1, 3, side, side, device=model.device, requires_grad=True)
    started = time.perf_counter()
    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda packed: packed):
        model.module(x)
    seconds = time.perf_counter() - started
    return Footprint(
        saved=sum(sizes),
        forward=FORWARD_LIVE * max(sizes, default=0),
        parameters=sum(p.numel() for p in model.module.parameters()),
        weight_bytes=sum(t.numel() * t.element_size() for t in [*model.module.parameters(), *model.module.buffers()]),
        side=side,
        seconds=seconds,
    )


def per_image(analysis: object, need: Footprint) -> int:
    """Bytes one image of `analysis`'s internal batch costs: a forward pass alone for Occlusion; for Gradient x
    attention, whose explicit attention path keeps every attention matrix as well, twice the saved activations."""
    if isinstance(analysis, Occlusion):
        return need.forward
    if isinstance(analysis, GradientAttention):
        return 2 * need.saved
    return need.saved


def bytes_at(analysis: object, need: Footprint, batch: int) -> int:
    """Bytes beyond the weights that `analysis` needs at internal batch `batch`."""
    return SCRATCH + batch * per_image(analysis, need)


def sized_batch(analysis: object, need: Footprint, budget: int) -> int:
    """The largest internal batch, up to the one `analysis` asks for, that keeps it within `budget` bytes beyond
    the weights; TooLarge when one image at a time is already over."""
    wanted = max(1, int(getattr(analysis, "batch_size", 1)))
    fits = (budget - SCRATCH) // max(per_image(analysis, need), 1)
    if fits < 1:
        method = getattr(analysis, "method", type(analysis).__name__)
        raise TooLarge(
            f"{method} on a {need.parameters / 1e6:.0f} M-parameter model at {need.side} px needs "
            f"~{amount(bytes_at(analysis, need, 1))} even one image at a time; this server allows "
            f"{amount(budget)} per request: {instead(need, budget)}"
        )
    return int(min(wanted, fits))


def check_time(analysis: object, need: Footprint, allowed: float) -> Estimate:
    """How long `analysis` is expected to take here (attributions.estimate, from the footprint's timed forward pass
    before the model's first map); TooLarge when over `allowed` seconds."""
    expected = estimate(analysis, need.seconds)
    if expected.seconds > allowed:
        method = getattr(analysis, "method", type(analysis).__name__)
        raise TooLarge(
            f"{method} on a {need.parameters / 1e6:.0f} M-parameter model at {need.side} px would take "
            f"~{expected.seconds / 60:.0f} min here ({expected.cost.passes} passes); this server allows "
            f"{allowed / 60:.0f} min per request: try fewer steps or samples, Saliency, or a smaller model"
        )
    return expected


def instead(need: Footprint, budget: int) -> str:
    """What would fit on the same model within `budget`, or the advice to take a smaller one."""
    if SCRATCH + need.forward <= budget:
        return "try Occlusion (no backward pass), or a smaller model"
    return "try a smaller model (fewer parameters or a smaller input)"


def amount(size: int) -> str:
    """'850 MB', '2.1 GB'."""
    return f"{size / 2**30:.1f} GB" if size >= 2**30 else f"{size / MB:.0f} MB"


def request_budget() -> int:
    """Bytes a request may use beyond the weights: VIT_EXPLORER_REQUEST_MB (default 1,500)."""
    return int(float(os.environ.get("VIT_EXPLORER_REQUEST_MB", 1500)) * MB)


_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or None) if os.name == "posix" else None
M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas (MALLOC_ARENA_MAX, set from inside), so memory freed by one thread is reused by
    the others rather than kept in per-thread arenas; False where the C library has no mallopt."""
    mallopt = getattr(_LIBC, "mallopt", None)
    return bool(mallopt and mallopt(M_ARENA_MAX, arenas))


def give_back() -> bool:
    """Return the C heap's free pages to the system (glibc's malloc_trim) after a large job; False where the C
    library has none."""
    trim = getattr(_LIBC, "malloc_trim", None)
    return bool(trim and trim(0))
