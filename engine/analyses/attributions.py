"""Where a model looks for one class, by gradient and perturbation methods (captum underneath where it has
them), for any model: CNNs, ViTs and hybrids alike.

    result = IntegratedGradients(model, steps=32).attribute(image)      # AttributionMap for the top-1 class
    result = Occlusion(model).attribute(image, 281)                     # ... or for class 281
    METHODS["SmoothGrad"](model).attribute(image)                       # by the name the app shows
    estimate(Occlusion(model)).text                                     # "about 4 s", before starting it

The defaults are sized to finish within about 5 s on ResNet-50 and ViT-S/16 (224 px) on two CPU cores:
IG_STEPS path points, SMOOTHGRAD_SAMPLES noisy copies, Occlusion's 6 x 6 overlapping windows at 224 px
(`occlusion_grid`). Finer maps on request: `steps`, `samples`, `window`, `stride`. Each method's `cost()`
counts the images it sends through the model (forward only, or forward and backward); `estimate` turns that
into seconds from this model's measured per-image times (`pass_seconds`), kept up to date by every map made.

Each returns an AttributionMap: an (H, W) map in [0, 1] on the model's input grid, the class it explains,
and the signed per-pixel attributions before scaling (`raw`). Channels are reduced as each method's
paper does: Saliency and SmoothGrad take the largest |gradient| over the colour channels (Simonyan et al.
2014; Smilkov et al. 2017); Integrated Gradients (Sundararajan et al. 2017) and Occlusion (Zeiler & Fergus
2014) sum the channels and show the positive part (evidence for the class). Baselines are a black image
after the model's transform. Gradient x attention (Chefer et al. 2021, "Generic Attention-model
Explainability") propagates the positive gradient-weighted attention of every layer,
R <- R + mean_heads((dy/dA * A)^+) R, and reads the CLS row over the patches.
"""

from __future__ import annotations

import hashlib
import math
import time
import weakref
from abc import abstractmethod
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from ..errors import EngineError
from ..models.registry import LoadedModel
from ..results import AttributionMap
from .base import Images, Labels, ModelAnalysis, Progress, explicit_attention, fused_attention, owned
from .gradcam import GradCam


def _listed(labels: Labels | int) -> Labels:
    return [labels] if isinstance(labels, (int, np.integer)) else labels


def black(model: LoadedModel, x: torch.Tensor) -> torch.Tensor:
    """A black image after `model`'s transform, shaped like `x` (the baseline of IG and Occlusion)."""
    size = x.shape[-1]
    pixel = model.transform(Image.new("RGB", (size, size)))[:, :1, :1]
    return pixel.expand(x.shape[1:]).unsqueeze(0).to(x)


def patch_size(model: LoadedModel) -> int | None:
    """The side of the model's patches (ViT-like models), or None."""
    embed = getattr(model.module, "patch_embed", None)
    size = getattr(embed, "patch_size", None)
    if size is None:
        return None
    return int(size[0] if isinstance(size, (tuple, list)) else size)


IG_STEPS = 8  # Integrated Gradients' default path points
SMOOTHGRAD_SAMPLES = 8  # SmoothGrad's default noisy copies
OCCLUSION_STRIDES = 7  # Occlusion's default stride: about 1/7 of the input side (32 px at 224 px)
BACKWARD_RATIO = 3.0  # a forward with a backward pass against a forward pass alone, until measured


@dataclass(frozen=True)
class Cost:
    """The model work one map takes: images through a forward pass only, images through a forward and a
    backward pass, and model calls (the steps its progress counts). Finding the top-1 class (no class
    given) adds one forward pass of one image."""

    forward: int
    backward: int
    passes: int


@dataclass
class PassSeconds:
    """Seconds per image of one model on this machine: a forward pass alone, and a forward with a backward."""

    forward: float
    backward: float


@dataclass(frozen=True)
class Estimate:
    """How long a map is expected to take: its cost at this model's measured seconds per image."""

    cost: Cost
    seconds: float

    @property
    def text(self) -> str:
        """For the page: "under a second", "about 4 s", "about 2 min"."""
        return about(self.seconds)


def about(seconds: float) -> str:
    """A duration for the page: "under a second", "about 4 s", "about 2 min"."""
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"about {round(seconds)} s"
    return f"about {round(seconds / 60)} min"


_SECONDS: weakref.WeakKeyDictionary[torch.nn.Module, PassSeconds] = weakref.WeakKeyDictionary()


def pass_seconds(model: LoadedModel, forward: float | None = None) -> PassSeconds:
    """`model`'s seconds per image here: the latest map's, or (before any) `forward` seconds of a forward pass
    already timed elsewhere (a backward at BACKWARD_RATIO), or one black image timed through a forward pass, then
    a forward and a backward pass to the input (not counted in `forward_passes`)."""
    if model.module not in _SECONDS and forward is not None:
        _SECONDS[model.module] = PassSeconds(forward, BACKWARD_RATIO * forward)
    known = _SECONDS.get(model.module)
    if known is None:
        size = model_input_size(model)
        x = torch.zeros(1, 3, size, size, device=model.device)
        start = time.perf_counter()
        with torch.no_grad():
            model.module(x)
        forward = time.perf_counter() - start
        x.requires_grad_()
        start = time.perf_counter()
        with torch.enable_grad():
            torch.autograd.grad(model.module(x)[0, 0].float(), x)
        known = _SECONDS[model.module] = PassSeconds(forward, time.perf_counter() - start)
    return known


def learn_seconds(model: LoadedModel, cost: Cost, seconds: float) -> None:
    """Take `model`'s seconds per image from a map of `cost` that took `seconds` (its estimate now says
    `seconds`): a rate it did not exercise is kept, or set at BACKWARD_RATIO; both scale when it had both."""
    known = _SECONDS.get(model.module)
    if cost.backward == 0:
        forward = seconds / max(cost.forward, 1)
        backward = known.backward if known else BACKWARD_RATIO * forward
    elif cost.forward == 0:
        backward = seconds / cost.backward
        forward = known.forward if known else backward / BACKWARD_RATIO
    else:
        forward, backward = (known.forward, known.backward) if known else (1.0, BACKWARD_RATIO)
        scale = seconds / (cost.forward * forward + cost.backward * backward)
        forward, backward = forward * scale, backward * scale
    _SECONDS[model.module] = PassSeconds(forward, backward)


def estimate(analysis: ModelAnalysis, forward: float | None = None) -> Estimate:
    """How long `analysis` (any method of METHODS, with its settings) is expected to take on its model; before
    any map of it, from `forward` (one image's forward pass, timed elsewhere) or else one image timed now (call it
    on the model's thread)."""
    cost = analysis.cost() if hasattr(analysis, "cost") else Cost(0, 1, 1)  # Grad-CAM: one backward pass
    per_image = pass_seconds(analysis.model, forward)
    return Estimate(cost, cost.forward * per_image.forward + cost.backward * per_image.backward)


class InputAttribution(ModelAnalysis):
    """A map over the input pixels for one image and one class; subclasses give `_attribute`."""

    method: ClassVar[str]

    def __init__(self, model: LoadedModel, batch_size: int = 16) -> None:
        super().__init__(model, batch_size)

    @classmethod
    def unsupported(cls, model: LoadedModel) -> str | None:
        """Why the method does not apply to `model`, or None when it does."""
        return None

    def cost(self) -> Cost:
        """The model work of one map for a given class (one backward pass; overridden)."""
        return Cost(0, 1, 1)

    def _calls(self) -> int:
        """How many model calls the method makes (for progress)."""
        return self.cost().passes

    @abstractmethod
    def _attribute(self, x: torch.Tensor, target: int, forward: Callable) -> tuple[torch.Tensor, float | None]:
        """(1, 3, H, W) signed attributions and captum's convergence delta where it has one."""

    def _reduce(self, attributions: torch.Tensor) -> torch.Tensor:
        """(H, W) signed map from (3, H, W) attributions: the channel sum (overridden for gradients)."""
        return attributions.sum(0)

    def _shown(self, raw: torch.Tensor) -> torch.Tensor:
        """The map as shown, before scaling to [0, 1]: the positive part (overridden for gradients)."""
        return raw.clamp_min(0)

    def attribute(
        self, images: Images, labels: Labels | int | None = None, progress: Progress | None = None
    ) -> AttributionMap:
        """The map of one image (one file/PIL/array, a one-image list or a (1, 3, H, W) batch) for class
        `labels` (an index; None: the top-1 class)."""
        unsupported = self.unsupported(self.model)
        if unsupported:
            raise EngineError(f"{self.method} does not apply to {self.model.spec.label}: {unsupported}")
        if not isinstance(images, (list, tuple, torch.Tensor)):
            images = [images]
        x = self.inputs(images).to(self.model.device)
        if len(x) != 1:
            raise EngineError(f"{self.method} explains one image at a time, not {len(x)}")
        done, total = 0, self._calls() + (labels is None)

        def forward(batch: torch.Tensor) -> torch.Tensor:
            nonlocal done
            if progress:  # before the pass, at a batch boundary: the previous batch's graph is gone
                progress(min(done, total), total)
            out = self.forward(batch).float()
            done += 1
            return out

        if labels is None:
            with torch.no_grad():
                target = int(forward(x)[0].argmax())
        else:
            target = int(self.targets(_listed(labels), 1)[0])
        classes = len(self.model.spec.labels())
        if not 0 <= target < classes:
            raise EngineError(f"class {target} is out of range: {self.model.spec.label} has {classes} classes")
        start = time.perf_counter()
        with torch.enable_grad():
            attributions, delta = self._attribute(x, target, forward)
        learn_seconds(self.model, self.cost(), time.perf_counter() - start)
        if progress:
            progress(total, total)
        raw = self._reduce(attributions.detach()[0].float()).cpu()
        shown = self._shown(raw)
        peak = float(shown.max())
        label = self.model.spec.labels()[target]
        total_attribution = float(attributions.detach().sum())
        scaled = (shown / peak if peak > 0 else shown).numpy()
        return AttributionMap(self.method, target, label, scaled, raw.numpy(), delta, total_attribution)


class _Gradients(InputAttribution):
    def _reduce(self, attributions: torch.Tensor) -> torch.Tensor:
        return attributions.abs().amax(0)

    def _shown(self, raw: torch.Tensor) -> torch.Tensor:
        return raw


class Saliency(_Gradients):
    """|d logit / d pixel|, largest over the colour channels (Simonyan et al. 2014): one backward pass."""

    method = "Saliency"

    def _attribute(self, x, target, forward):
        from captum import attr  # here: captum takes half a second to import, and a server may draw no map

        return attr.Saliency(forward).attribute(x.detach().requires_grad_(), target=target, abs=True), None


class SmoothGrad(_Gradients):
    """Saliency averaged over `samples` noisy copies, noise sd `noise` of the input's range (Smilkov et al.)."""

    method = "SmoothGrad"

    def __init__(
        self, model: LoadedModel, samples: int = SMOOTHGRAD_SAMPLES, noise: float = 0.15, batch_size: int = 8
    ) -> None:
        if samples < 1:
            raise EngineError(f"SmoothGrad needs at least 1 sample, not {samples}")
        super().__init__(model, batch_size)
        self.samples, self.noise = samples, noise

    def cost(self) -> Cost:
        return Cost(0, self.samples, math.ceil(self.samples / self.batch_size))

    def _attribute(self, x, target, forward):
        from captum import attr

        tunnel = attr.NoiseTunnel(attr.Saliency(forward))
        sigma = self.noise * float(x.max() - x.min())
        with torch.random.fork_rng(devices=[x.device] if x.device.type == "cuda" else []):
            torch.manual_seed(self.request_seed(x, target))  # the same request draws the same noise
            grads = tunnel.attribute(
                x.detach().requires_grad_(),
                nt_type="smoothgrad",
                nt_samples=self.samples,
                nt_samples_batch_size=self.batch_size,
                stdevs=sigma,
                target=target,
                abs=True,
            )
        return grads, None

    def request_seed(self, x: torch.Tensor, target: int) -> int:
        """The noise's seed, from the request: the input's pixels, the model, the class and the noise's size, so
        that the CLI, both front ends and a recompute draw the same noise (more samples draw more of the same)."""
        digest = hashlib.sha256(x.detach().cpu().numpy().tobytes())
        digest.update(repr((self.model.name, int(target), self.noise)).encode())
        return int.from_bytes(digest.digest()[:8], "little")


class IntegratedGradients(InputAttribution):
    """Gradients integrated along the straight path from a black image to the input, `steps` points
    (Gauss-Legendre), `batch_size` of them per pass; the result carries captum's convergence delta:
    sum(attributions) - (f(x) - f(black))."""

    method = "Integrated Gradients"

    def __init__(self, model: LoadedModel, steps: int = IG_STEPS, batch_size: int = 8) -> None:
        if steps < 2:
            raise EngineError(f"Integrated Gradients needs at least 2 steps, not {steps}")
        super().__init__(model, batch_size)
        self.steps = steps

    def cost(self) -> Cost:  # the path, then f(x) and f(black) for the delta
        return Cost(2, self.steps, math.ceil(self.steps / self.batch_size) + 2)

    def _attribute(self, x, target, forward):
        from captum import attr

        ig = attr.IntegratedGradients(forward)
        values, delta = ig.attribute(
            x,
            baselines=black(self.model, x),
            target=target,
            n_steps=self.steps,
            internal_batch_size=self.batch_size,
            return_convergence_delta=True,
        )
        return values, float(delta.abs().max())


def occlusion_grid(model: LoadedModel) -> tuple[int, int]:
    """Occlusion's default (window, stride) in pixels: a stride of about 1/OCCLUSION_STRIDES of the input (whole
    patches for ViT-like models, aligned to their token grid), windows of about two strides that together
    cover the input: 64 and 32 px at 224 px (6 x 6 windows), 8 and 4 px at 32 px (7 x 7)."""
    size, patch = model_input_size(model), patch_size(model) or 1
    stride = max(patch, size // OCCLUSION_STRIDES // patch * patch)
    per_side = max(1, (size - stride) // stride)
    return size - (per_side - 1) * stride, stride


class Occlusion(InputAttribution):
    """The drop of the class's logit when a window of the input is blacked out, window by window; by default
    the `occlusion_grid` (overlapping windows), finer on request (`window` and `stride` in pixels; a window
    alone gets half-window strides); `batch_size` occluded copies per pass."""

    method = "Occlusion"

    def __init__(self, model: LoadedModel, window: int | None = None, stride: int | None = None, batch_size: int = 8):
        super().__init__(model, batch_size)
        size = model_input_size(model)
        default_window, default_stride = occlusion_grid(model)
        self.window = window or default_window
        self.stride = stride or (default_stride if window is None else max(1, self.window // 2))
        if not 1 <= self.window <= size or not 1 <= self.stride <= size:
            raise EngineError(f"Occlusion's window and stride are 1 to {size} px, not {self.window} and {self.stride}")

    def cost(self) -> Cost:  # the clean input, then the occluded copies
        per_side = (model_input_size(self.model) - self.window) // self.stride + 1
        return Cost(per_side**2 + 1, 0, math.ceil(per_side**2 / self.batch_size) + 1)

    def _attribute(self, x, target, forward):
        from captum import attr

        occlusion = attr.Occlusion(forward)
        with torch.no_grad():
            values = occlusion.attribute(
                x,
                sliding_window_shapes=(x.shape[1], self.window, self.window),
                strides=(x.shape[1], self.stride, self.stride),
                baselines=black(self.model, x),
                target=target,
                perturbations_per_eval=self.batch_size,
            )
        return values / x.shape[1], None  # captum spreads each drop over the channels: one drop per pixel


def model_input_size(model: LoadedModel) -> int:
    """The side of the model's input, read from its transform on a small image."""
    return int(model.transform(Image.new("RGB", (8, 8))).shape[-1])


class GradientAttention(ModelAnalysis):
    """Chefer et al. 2021: every layer's attention A weighted by its gradient, R <- R + mean_h((dA * A)^+) R
    from R = I, the CLS row over the patches; for models with global attention over one token grid."""

    method = "Gradient x attention"

    def __init__(self, model: LoadedModel) -> None:
        super().__init__(model, batch_size=1)

    def cost(self) -> Cost:
        return Cost(0, 1, 1)

    @classmethod
    def unsupported(cls, model: LoadedModel) -> str | None:
        if model.spec.attention != "global":
            kind = "no attention" if model.spec.attention is None else "attention inside local windows"
            return f"it needs global attention with a class token, and this model has {kind}"
        specs = model.spec.blocks(model.module)
        msa = [i for i, s in enumerate(specs) if s.kind == "msa"]
        if any(s.kind == "pool" for s in specs[msa[0] :]) or not specs[msa[0]].prefix_tokens:
            return "its token grid changes between layers (pooling), so attention cannot be chained"
        return None

    def attribute(
        self, images: Images, labels: Labels | int | None = None, progress: Progress | None = None
    ) -> AttributionMap:
        """The map of one image for class `labels` (None: top-1): one forward and one backward pass."""
        unsupported = self.unsupported(self.model)
        if unsupported:
            raise EngineError(f"{self.method} does not apply to {self.model.spec.label}: {unsupported}")
        if not isinstance(images, (list, tuple, torch.Tensor)):
            images = [images]
        x = self.inputs(images)
        if len(x) != 1:
            raise EngineError(f"{self.method} explains one image at a time, not {len(x)}")
        specs = self.model.spec.blocks(self.model.module)
        units = [s for s in specs if s.kind == "msa"]
        prefix = units[0].prefix_tokens
        probs: list[torch.Tensor] = []

        def keep(module: torch.nn.Module, args: tuple, out: torch.Tensor) -> None:
            probs.append(out)

        handles, fused = [], []
        for spec in units:
            attn = spec.residual_parent.attn
            explicit_attention(attn)  # timm's explicit path forms the softmax, at attn_drop
            fused.append(attn)
            handles.append(attn.attn_drop.register_forward_hook(owned(keep)))
        start = time.perf_counter()
        try:
            with torch.enable_grad():
                logits = self.forward(x)[0].float()
                target = int(logits.argmax()) if labels is None else int(self.targets(_listed(labels), 1)[0])
                if not 0 <= target < len(logits):
                    raise EngineError(f"class {target} is out of range: {self.model.spec.label} has {len(logits)}")
                grads = torch.autograd.grad(logits[target], probs)
        finally:
            for handle in handles:
                handle.remove()
            for attn in fused:
                fused_attention(attn)
        learn_seconds(self.model, self.cost(), time.perf_counter() - start)
        n = probs[0].shape[-1]
        relevance = torch.eye(n)
        for a, grad in zip(probs, grads):
            weighted = (grad * a).clamp_min(0).mean(dim=1)[0].detach().float().cpu()
            relevance = relevance + weighted @ relevance
        row = relevance[0, prefix:]
        side = math.isqrt(len(row))
        grid = row.reshape(1, 1, side, side)
        size = x.shape[-1]
        raw = F.interpolate(grid, size=(size, size), mode="bilinear")[0, 0]
        peak = float(raw.max())
        if progress:
            progress(1, 1)
        label = self.model.spec.labels()[target]
        scaled = (raw / peak if peak > 0 else raw).numpy()
        return AttributionMap(self.method, target, label, scaled, raw.numpy(), None, float(row.sum()))


METHODS: dict[str, type] = {
    cls.method: cls for cls in (GradCam, Saliency, SmoothGrad, IntegratedGradients, Occlusion, GradientAttention)
}


def unsupported(method: str, model: LoadedModel) -> str | None:
    """Why `method` does not apply to `model` (None when it does)."""
    if method not in METHODS:
        raise EngineError(f"unknown attribution method {method!r}; choose from {', '.join(METHODS)}")
    check = getattr(METHODS[method], "unsupported", None)
    return check(model) if check else None
