"""The logit lens: when does the answer appear? The model's own final norm and head applied after every block.

    result = LogitLens(model).attribute(image)    # per block: top-5 and the final class's probability

Token models (ViT, DeiT, EVA, BEiT, the CIFAR ViT) are read through their final norm and head as they
are: the head pools the tokens as it does at the end (class token, or the mean of the patch tokens). For
stage models (ResNet, ConvNeXt, Swin, AlterNet) the head fits only latents of its width, the last
stage's; blocks it does not fit are marked so (`applies` False) and named in `note`. At the last block
the lens is the model's output. For token models each patch token is also read alone through the norm
and head: the final class's logit per patch, per block (`patch_logits`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from torch import nn

from ..models.registry import LoadedModel
from ..results import Prediction
from .base import Images, Labels, ModelAnalysis, Progress
from .block_measures import watch_latents


@dataclass
class LensBlock:
    """The lens after one block."""

    index: int
    name: str
    kind: str
    normalized_depth: float
    applies: bool  # whether the head fits this block's latent
    top5: list[Prediction] = field(default_factory=list)
    final_probability: float | None = None  # of the class the model finally predicts


@dataclass
class LogitLensResult:
    model: str
    label: str
    final_class: int
    final_label: str
    blocks: list[LensBlock]
    patch_logits: list[np.ndarray | None] = field(default_factory=list, repr=False)  # per block: (h, w), final class
    note: str = ""

    @property
    def first_top1(self) -> LensBlock | None:
        """The first block from which the final class stays the lens's top-1 to the end."""
        found = None
        for block in self.blocks:
            if block.applies and block.top5 and block.top5[0].index == self.final_class:
                found = found or block
            elif block.applies:
                found = None
        return found

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "final_class": self.final_class,
            "final_label": self.final_label,
            "note": self.note,
            "blocks": [
                {
                    "index": b.index,
                    "name": b.name,
                    "kind": b.kind,
                    "normalized_depth": b.normalized_depth,
                    "applies": b.applies,
                    "top5": [{"label": p.label, "index": p.index, "probability": p.probability} for p in b.top5],
                    "final_probability": b.final_probability,
                }
                for b in self.blocks
            ],
        }


def lens_head(module: nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
    """The model's own end, from a latent to logits: its final norm (timm's `norm`, or `norm_pre`) then its
    head (`forward_head`, or the `head` module of the CIFAR family)."""
    norm = getattr(module, "norm", None) or getattr(module, "norm_pre", None) or nn.Identity()
    if hasattr(module, "forward_head"):
        return lambda z: module.forward_head(norm(z))
    return lambda z: module.head(norm(z))


def patch_head(module: nn.Module) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """Each token alone through the final norm and the head (timm's VisionTransformer family), or None."""
    if not all(hasattr(module, a) for a in ("norm", "head", "num_prefix_tokens", "patch_embed")):
        return None
    fc_norm = getattr(module, "fc_norm", None) or nn.Identity()
    return lambda tokens: module.head(fc_norm(module.norm(tokens)))


class LogitLens(ModelAnalysis):
    """Per block, what the model's head makes of the latent: the top-5 and the final class's probability."""

    def __init__(self, model: LoadedModel) -> None:
        super().__init__(model, batch_size=1)

    @torch.inference_mode()
    def attribute(
        self, images: Images, labels: Labels | None = None, progress: Progress | None = None
    ) -> LogitLensResult:
        """The lens on one image (one file/PIL/array, a one-image list or a (1, 3, H, W) batch)."""
        if not isinstance(images, (list, tuple, torch.Tensor)):
            images = [images]
        x = self.inputs(images)
        specs = self.model.spec.blocks(self.model.module)
        latents: dict[int, torch.Tensor] = {}
        handles = watch_latents(specs, lambda index, latent: latents.__setitem__(index, latent))
        try:
            output = self.forward(x).float()[0]
        finally:
            for handle in handles:
                handle.remove()
        names = self.model.spec.labels()
        final = int(output.argmax())
        head, per_patch = lens_head(self.model.module), patch_head(self.model.module)
        last = max(len(specs) - 1, 1)
        blocks, maps, misfits = [], [], []
        for i, spec in enumerate(specs):
            logits = self._read(head, latents.get(i), output.shape)
            if logits is None:
                blocks.append(LensBlock(i, spec.name, spec.kind, i / last, applies=False))
                maps.append(None)
                misfits.append(spec.name)
            else:
                probs = logits.softmax(-1).cpu()
                top = probs.topk(min(5, len(probs)))
                top5 = [Prediction(names[j], int(j), float(p)) for p, j in zip(top.values, top.indices)]
                blocks.append(LensBlock(i, spec.name, spec.kind, i / last, True, top5, float(probs[final])))
                maps.append(self._patch_map(per_patch, latents[i], final))
            if progress:
                progress(i + 1, len(specs))
        note = ""
        if misfits:
            note = (
                f"The head reads only latents of its own width: {len(misfits)} of {len(specs)} blocks "
                f"(the earlier stages) cannot be read by it."
            )
        return LogitLensResult(self.model.name, self.model.spec.label, final, names[final], blocks, maps, note)

    @staticmethod
    def _read(head: Callable, latent: object, shape: torch.Size) -> torch.Tensor | None:
        """The head's logits of one latent, or None where the head does not fit it (width or layout)."""
        if not isinstance(latent, torch.Tensor):
            return None
        try:
            logits = head(latent).float()[0]
        except RuntimeError:
            return None
        return logits if logits.shape == shape else None

    def _patch_map(self, per_patch: Callable | None, latent: torch.Tensor, final: int) -> np.ndarray | None:
        """The final class's logit of each patch token read alone, on the patch grid (token models)."""
        if per_patch is None or latent.dim() != 3:
            return None
        patch = per_patch(latent[0, self.model.module.num_prefix_tokens :]).float()[:, final]
        side = math.isqrt(len(patch))  # copied out: a view would keep every class's logits (a run 19 MB larger)
        return patch.reshape(side, side).cpu().numpy().copy() if side * side == len(patch) else None
