"""The memory one attribution map needs, known before it runs, and its internal batch sized to a budget.

    need = footprint(model)                          # bytes per image, traced once without computing anything
    batch = sized_batch(IntegratedGradients(model), need, budget)   # or TooLarge: what would fit instead

A map's memory beyond the weights is its internal batch times what one image costs: for the gradient methods
(Saliency, SmoothGrad, Integrated Gradients, Grad-CAM, Gradient x attention) the activations autograd keeps for
the backward pass, for Occlusion (no gradients) the peak of a forward pass alone, plus a fixed allowance for the
libraries' scratch space. What one image keeps is counted on a forward pass of one black image through fake tensors
(shapes only: nothing is allocated or computed), so a model too large for the budget is refused before it runs.
The plain analysis is estimated the same way (`check_plain`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time
from dataclasses import dataclass

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.func import functional_call
from torch.multiprocessing.reductions import StorageWeakRef

from ..errors import EngineError
from ..models.registry import LoadedModel
from .attributions import Estimate, GradientAttention, Occlusion, estimate, model_input_size
from .base import explicit_attention, fused_attention
from .faithfulness import DeletionInsertion

MB = 2**20
SCRATCH = 160 * MB  # captum's copies, oneDNN scratch and allocator slack: 100-140 MB measured on ViT-Ti and ResNet-18
FORWARD_LIVE = 4  # a forward pass without gradients holds at most a few of its largest activations at once


class ShapesOnly(FakeTensorMode):
    """Fake tensors that never set up a CUDA device guard. On a CUDA build of torch without a GPU, FakeTensorMode
    sets a no-op one as it is entered, and in torch 2.11, once the thread that set it first has ended, the next
    thread that enters crashes the process (a segmentation fault, seen with the model threads, Streamlit's script
    threads and a ZeroGPU worker). The models traced here are on the CPU or on a GPU there is: no guard is needed."""

    @property
    def avoid_device_init(self) -> bool:
        return False


READING_LIVE = 9  # ... its attention read: scores, bias, softmax (beit_large_patch16_512: 766 MB, estimate 836)


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
    reading: int = 0  # a forward pass with its attention read (explicit softmax, kept rollout rows): the analysis


def footprint(model: LoadedModel, timed: bool = True) -> Footprint:
    """`model`'s memory per image: the activations one black image's forward pass saves for a backward pass, counted
    on fake tensors (torch's FakeTensorMode: shapes only, no memory and no arithmetic; a real pass, each saved
    activation dropped at once, where a model cannot be traced so); `timed`: then one real forward pass of one image
    timed, for the time estimates."""
    side = model_input_size(model)
    try:
        saved, largest, _ = _traced(model, side)
        reading = _reading(model, side) if model.spec.attention is not None else 0
    except Exception:  # an operation fake tensors cannot run: measured for real
        saved, largest = _measured(model, side)
        reading = saved  # over: every activation, as if kept
    return Footprint(
        saved=saved,
        forward=FORWARD_LIVE * largest,
        parameters=sum(p.numel() for p in model.module.parameters()),
        weight_bytes=sum(t.numel() * t.element_size() for t in [*model.module.parameters(), *model.module.buffers()]),
        side=side,
        seconds=forward_seconds(model) if timed else 0.0,
        reading=reading,
    )


def forward_seconds(model: LoadedModel) -> float:
    """Seconds of one real forward pass of one black image here, for the time estimates."""
    side = model_input_size(model)
    x = torch.zeros(1, 3, side, side, device=model.device)
    started = time.perf_counter()
    with torch.inference_mode():
        model.module(x)
    return time.perf_counter() - started


def _reading(model: LoadedModel, side: int) -> int:
    """Bytes of a forward pass that reads the attention, as the analysis does: the explicit softmax's largest
    activations, and one (tokens x tokens) head-mean row per attention layer kept for the rollout."""
    layers = [module for module in model.module.modules() if hasattr(module, "fused_attn")]
    for attn in layers:
        explicit_attention(attn)
    try:
        _, largest, shape = _traced(model, side)
    finally:
        for attn in layers:
            fused_attention(attn)
    tokens = shape[-1] if len(shape) >= 2 and shape[-1] == shape[-2] else 0
    return READING_LIVE * largest + len(layers) * tokens * tokens * 4


class _Saved:
    """saved_tensors_hooks' pack, counting each storage saved once, weights and buffers not (never unpacked: no
    backward pass follows)."""

    def __init__(self, own: set[int]) -> None:
        self.own, self.sizes, self.kept = own, {}, []
        self.largest: tuple[int, tuple[int, ...]] = (0, ())

    def pack(self, tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        key = storage._cdata
        if key not in self.own and key not in self.sizes:
            self.sizes[key] = storage.nbytes()
            self.kept.append(storage)  # held, so that its address is not reused by another
            if storage.nbytes() > self.largest[0]:
                self.largest = (storage.nbytes(), tuple(tensor.shape))
        return None

    def totals(self) -> tuple[int, int, tuple[int, ...]]:
        """Bytes saved in all, the largest activation and its shape."""
        return sum(self.sizes.values()), *self.largest


def _traced(model: LoadedModel, side: int) -> tuple[int, int, tuple[int, ...]]:
    """The saved bytes, largest activation and its shape of one image's forward pass, on fake copies of the model's
    weights."""
    mode = ShapesOnly()
    state = {**dict(model.module.named_parameters()), **dict(model.module.named_buffers())}
    fakes = {name: mode.from_tensor(tensor) for name, tensor in state.items()}
    saved = _Saved({fake.untyped_storage()._cdata for fake in fakes.values()})
    with mode:
        x = torch.zeros(1, 3, side, side, device=model.device, requires_grad=True)
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(saved.pack, lambda packed: packed):
            functional_call(model.module, fakes, (x,))
    return saved.totals()


def _measured(model: LoadedModel, side: int) -> tuple[int, int]:
    """As `_traced`, on a real forward pass whose saved activations are dropped as soon as they are counted."""
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
        return None

    x = torch.zeros(1, 3, side, side, device=model.device, requires_grad=True)
    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda packed: packed):
        model.module(x)
    return sum(sizes), max(sizes, default=0)


def plain_bytes(model: LoadedModel, need: Footprint) -> int:
    """Bytes beyond the weights of the plain analysis (every block measured in one pass, the logit lens, and
    Grad-CAM's backward pass for a model whose attention is not recorded)."""
    return SCRATCH + (need.saved if model.spec.attention is None else need.reading)


def check_plain(model: LoadedModel, need: Footprint, budget: int) -> None:
    """TooLarge, saying what it needs, when the plain analysis of `model` is over `budget` bytes."""
    needed = plain_bytes(model, need)
    if needed > budget:
        why = " (its Grad-CAM's backward pass)" if model.spec.attention is None else ""
        raise TooLarge(
            f"analyzing a {need.parameters / 1e6:.0f} M-parameter model at {need.side} px needs ~{amount(needed)}"
            f"{why}; this server allows {amount(budget)} per request: try a smaller model (fewer parameters or a "
            "smaller input)"
        )


def per_image(analysis: object, need: Footprint) -> int:
    """Bytes one image of `analysis`'s internal batch costs: a forward pass alone for Occlusion and for deletion and
    insertion; for Gradient x attention, whose explicit attention path keeps every attention matrix as well, twice
    the saved activations."""
    if isinstance(analysis, (Occlusion, DeletionInsertion)):
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
