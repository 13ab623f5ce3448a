"""Attention read out during the one forward pass (MEASUREMENTS.md section 6).

The attention matrix softmax(q k^T / sqrt(d) [+ bias + mask]) is the layer's own: while recording,
each timm attention layer runs its explicit path instead of the fused kernel (which never forms the
matrix), and a hook on its attn_drop (an identity in eval) reads the softmax. Global attention (ViT,
DeiT, PiT) gives CLS-to-patch maps, the mean attention distance and, over one token grid (not
PiT's pooled stages), attention rollout; windowed attention (Swin) gives, per head, the mean
attention each position receives within its window, mapped back onto the image, and the mean
distance within windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import torch
from torch import nn

from ..models.blocks import BlockSpec
from ..results import AttentionLayer, AttentionResult
from .base import explicit_attention, fused_attention, owned


@lru_cache(maxsize=64)
def grid_distances(h: int, w: int, pixels_per_token: float, device: torch.device) -> torch.Tensor:
    """(h*w, h*w) Euclidean distances in pixels between token centers of an h x w grid."""
    ys, xs = torch.meshgrid(torch.arange(h, device=device), torch.arange(w, device=device), indexing="ij")
    centers = torch.stack([ys.flatten(), xs.flatten()], dim=1).float() * pixels_per_token
    return torch.cdist(centers, centers)


@lru_cache(maxsize=64)
def even_distance(h: int, w: int, pixels_per_token: float) -> float:
    """The mean distance of attention spread evenly over an h x w grid, worked out on the CPU: read
    from a GPU inside a hook, it would wait for the GPU to finish all the work queued before."""
    return grid_distances(h, w, pixels_per_token, torch.device("cpu")).mean().item()


@lru_cache(maxsize=64)
def distance_weights(h: int, w: int, prefix: int, pixels_per_token: float, device: torch.device) -> torch.Tensor:
    """((prefix + h*w)^2,) weights with probs.flatten(-2) @ weights the mean attention distance of an
    h x w grid of patches: query-key distances between patch centers divided by the number of patch
    queries, and zero on the prefix tokens' rows and columns (they are no patches)."""
    n = prefix + h * w
    weights = torch.zeros(n, n, device=device)
    weights[prefix:, prefix:] = grid_distances(h, w, pixels_per_token, device) / (h * w)
    return weights.flatten()


@dataclass
class _Layer:
    name: str
    block_index: int
    maps: list[torch.Tensor] = field(default_factory=list)  # per batch (B, heads, h, w)
    distances: list[torch.Tensor] = field(default_factory=list)  # per batch (B, heads)
    even_distance: float | None = None  # the mean distance of attention spread evenly (uniform)


class AttentionRecorder:
    """Hooks that record attention of every MSA unit while the model runs; `result()` after."""

    def __init__(self, kind: str, specs: list[BlockSpec], input_size: int) -> None:
        self.kind = kind
        self.input_size = input_size
        self.layers: list[_Layer] = []
        self._handles: list[torch.utils.hooks.RemovableHandle] = []
        self._fused: list[nn.Module] = []  # attention modules switched to their explicit path
        self._mixed: list[torch.Tensor] = []  # this batch's head-averaged attention per layer
        self._rollouts: list[torch.Tensor] = []
        self._units = [(i, s) for i, s in enumerate(specs) if s.kind == "msa"]
        # rollout multiplies every layer's attention: only over one token grid, no pooling between layers
        first = self._units[0][0] if self._units else len(specs)
        self.rollout = kind == "global" and not any(s.kind == "pool" for s in specs[first:])

    def attach(self) -> None:
        for index, spec in self._units:
            layer = _Layer(spec.name, index)
            self.layers.append(layer)
            if self.kind == "global":
                self._attach_global(spec.residual_parent.attn, layer, spec.prefix_tokens)
            elif spec.residual_parent is None:  # AlterNet's MSA block: channels first, softmax at attn_probs
                self._attach_window(spec.module, spec.module.attn.attn_probs, slice(2, 4), layer)
            else:  # Swin: channels last, softmax at attn_drop on timm's explicit path
                self._unfuse(spec.residual_parent.attn)
                self._attach_window(spec.residual_parent, spec.residual_parent.attn.attn_drop, slice(1, 3), layer)

    def detach(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        for attn in self._fused:
            fused_attention(attn)
        self._fused.clear()

    def start_batch(self) -> None:
        self._mixed = []

    def end_batch(self) -> None:
        """Attention rollout's CLS row, e_0 A_L ... A_1 with A = (head mean + I) / 2 (each softmax row sums
        to 1, so rows of head mean + I sum to 2), as a chain of vector-matrix products r + r @ mean,
        halved once at the end by 2^layers."""
        if self._mixed:
            row = self._mixed[-1][:, :1].clone()
            row[..., 0] += 1
            for mixed in reversed(self._mixed[:-1]):
                row = torch.baddbmm(row, row, mixed)
            self._rollouts.append(row[:, 0] / 2 ** len(self._mixed))
        self._mixed = []

    def _attach_global(self, attn: nn.Module, layer: _Layer, prefix: int) -> None:
        self._unfuse(attn)
        self._handles.append(
            attn.attn_drop.register_forward_hook(
                owned(lambda module, args, probs: self._record_global(probs.float(), layer, prefix))
            )
        )

    def _unfuse(self, attn: nn.Module) -> None:
        """Run `attn` on timm's explicit path (q k^T, softmax, attn_drop), where its softmax can be read,
        instead of the fused kernel that never forms it; `detach` restores the fused one."""
        explicit_attention(attn)
        self._fused.append(attn)

    def _record_global(self, probs: torch.Tensor, layer: _Layer, prefix: int) -> None:
        b, heads, n, _ = probs.shape
        side = math.isqrt(n - prefix)
        layer.maps.append(probs[:, :, 0, prefix:].reshape(b, heads, side, side).clone())  # not a view: frees probs
        layer.distances.append(
            probs.flatten(-2) @ distance_weights(side, side, prefix, self.input_size / side, probs.device)
        )
        if layer.even_distance is None:  # the same grid every batch: read once
            layer.even_distance = even_distance(side, side, self.input_size / side)
        if self.rollout:
            self._mixed.append(probs.mean(dim=1))  # head mean; rollout adds I and halves in end_batch

    def _attach_window(self, block: nn.Module, probs_at: nn.Module, hw_dims: slice, layer: _Layer) -> None:
        """Windowed attention: the block's input grid size (at `hw_dims` of its input) and the softmax
        seen as the output of `probs_at`."""
        captured: dict[str, tuple[int, int]] = {}

        def keep_shape(module: nn.Module, args: tuple) -> None:
            captured["hw"] = tuple(args[0].shape[hw_dims])

        def on_probs(module: nn.Module, args: tuple, probs: torch.Tensor) -> None:
            self._record_window(probs.float(), layer, block, captured["hw"])

        self._handles += [
            block.register_forward_pre_hook(owned(keep_shape)),
            probs_at.register_forward_hook(owned(on_probs)),
        ]

    def _record_window(self, probs: torch.Tensor, layer: _Layer, block: nn.Module, hw: tuple[int, int]) -> None:
        h, w = hw
        wh, ww = block.window_size
        hp, wp = math.ceil(h / wh) * wh, math.ceil(w / ww) * ww
        windows, heads, n, _ = probs.shape
        b = windows // ((hp // wh) * (wp // ww))
        received = probs.mean(dim=-2).reshape(b, hp // wh, wp // ww, heads, wh, ww)
        received = received.permute(0, 3, 1, 4, 2, 5).reshape(b, heads, hp, wp)[:, :, :h, :w]
        if any(block.shift_size):
            received = torch.roll(received, shifts=tuple(block.shift_size), dims=(2, 3))
        layer.maps.append(received)
        distances = probs.flatten(-2) @ distance_weights(wh, ww, 0, self.input_size / h, probs.device)
        layer.distances.append(distances.reshape(b, -1, heads).mean(dim=1))
        if layer.even_distance is None:
            layer.even_distance = even_distance(wh, ww, self.input_size / h)

    def result(self) -> AttentionResult:
        layers = [
            AttentionLayer(
                name=layer.name,
                block_index=layer.block_index,
                maps=torch.cat(layer.maps).cpu().numpy(),
                mean_distance=torch.cat(layer.distances).mean(dim=0).tolist(),
                even_distance=layer.even_distance,
            )
            for layer in self.layers
        ]
        rollout = None
        if self._rollouts:
            prefix = self._units[0][1].prefix_tokens
            rows = [r[:, prefix:] for r in self._rollouts]
            side = math.isqrt(rows[0].shape[-1])
            rollout = torch.cat(rows).reshape(-1, side, side).cpu().numpy()
        return AttentionResult(self.kind, layers, rollout)
