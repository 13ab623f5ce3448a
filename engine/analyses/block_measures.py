"""One forward pass per batch, with hooks measuring every block on the way (captum-style object API).

result = Analyzer(create_model("resnet50", weights="random")).attribute([image])
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn
from torch.utils.hooks import RemovableHandle
from torchvision import transforms as T

from ..data.images import ImageInput, load_image
from ..models.blocks import BlockSpec
from ..models.registry import LoadedModel, create_model
from ..models.weights_choice import Weights
from ..results import Analysis, BlockResult, ModelResult, Prediction
from .attention import AttentionRecorder
from .base import Images, Labels, ModelAnalysis, Progress, owned
from .measure import MapStatistics, map_statistics, to_bchw


def watch_latents(specs: list[BlockSpec], on_latent: Callable[[int, torch.Tensor], None]) -> list[RemovableHandle]:
    """Forward hooks calling `on_latent(index, latent)` as each block's latent is produced (an MSA or
    MLP unit's latent is its block's input plus the branch output); remove the handles when done."""
    handles = []
    for index, spec in enumerate(specs):
        if spec.residual_parent is None:
            handles.append(
                spec.module.register_forward_hook(owned(lambda m, args, out, index=index: on_latent(index, out)))
            )
        else:
            inputs: dict[str, torch.Tensor] = {}

            def keep_input(module: nn.Module, args: tuple, inputs=inputs) -> None:
                inputs["x"] = args[0]

            def on_branch(module: nn.Module, args: tuple, out: torch.Tensor, index=index, inputs=inputs) -> None:
                on_latent(index, inputs.pop("x") + out)

            handles.append(spec.residual_parent.register_forward_pre_hook(owned(keep_input)))
            handles.append(spec.module.register_forward_hook(owned(on_branch)))
    return handles


class _BlockMeter:
    """Hooks reading each latent as it is produced, while it is in cache, into its small
    MapStatistics; `end_batch` turns them into the per-batch values, those of one shape together
    (fewer tensor operations). Values stay on the model's device until `results`."""

    def __init__(self, specs: list[BlockSpec]) -> None:
        self.specs = specs
        self.curves: list[list[torch.Tensor]] = [[] for _ in specs]
        self.variances: list[list[torch.Tensor]] = [[] for _ in specs]
        self.shapes: list[tuple[int, ...]] = [()] * len(specs)
        self._pending: dict[torch.Size, list[tuple[int, MapStatistics]]] = {}  # this batch's, by shape
        self._handles: list[RemovableHandle] = []

    def attach(self) -> None:
        self._handles = watch_latents(self.specs, self._measure)

    def detach(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _measure(self, index: int, latent) -> None:
        x = to_bchw(latent, self.specs[index])
        self.shapes[index] = tuple(x.shape[1:])
        self._pending.setdefault(x.shape, []).append((index, map_statistics(x)))

    def end_batch(self) -> None:
        """This batch's curve and variance of every block: batch means of the per-image values."""
        for group in self._pending.values():
            stats = MapStatistics.stack([s for _, s in group])
            amplitudes = stats.log_amplitudes().mean(dim=-2)  # (blocks, J)
            curves = amplitudes - amplitudes[:, :1]
            for (index, _), curve, var in zip(group, curves, stats.variances().mean(dim=-1)):
                self.curves[index].append(curve)
                self.variances[index].append(var)
        self._pending = {}

    def results(self) -> list[BlockResult]:
        """Each block's per-batch values averaged over the batches."""
        variances = torch.stack([torch.stack(v) for v in self.variances]).mean(dim=1).tolist()
        curves = [torch.stack(c).mean(dim=0).tolist() for c in self.curves]
        return block_results(self.specs, self.shapes, variances, curves)


def block_results(
    specs: list[BlockSpec], shapes: list[tuple[int, ...]], variances: list[float], curves: list[list[float]]
) -> list[BlockResult]:
    """BlockResults of every block from its measured values, with normalized depth i / (L - 1)."""
    last = max(len(specs) - 1, 1)
    return [
        BlockResult(
            index=i,
            name=spec.name,
            kind=spec.kind,
            shape=shapes[i],
            normalized_depth=i / last,
            variance=variances[i],
            fourier=curves[i],
        )
        for i, spec in enumerate(specs)
    ]


def _normalization(transform) -> tuple[torch.Tensor, torch.Tensor]:
    steps = getattr(transform, "transforms", [transform])
    norm = next((t for t in steps if isinstance(t, T.Normalize)), None)
    if norm is None:
        return torch.zeros(3), torch.ones(3)
    return torch.as_tensor(norm.mean, dtype=torch.float32), torch.as_tensor(norm.std, dtype=torch.float32)


def as_seen(batch: torch.Tensor, transform) -> np.ndarray:
    """The normalized input batch back as (B, H, W, 3) uint8: the image as the model saw it."""
    mean, std = (t.to(batch.device) for t in _normalization(transform))
    pixels = batch.detach().float() * std[:, None, None] + mean[:, None, None]
    return (pixels.clamp(0, 1) * 255).round().byte().permute(0, 2, 3, 1).cpu().numpy()  # a GPU sends bytes


class Analyzer(ModelAnalysis):
    """Measures every block of one loaded model on a set of images, one forward pass per batch."""

    def __init__(self, model: LoadedModel, batch_size: int = 16, top_k: int = 5) -> None:
        super().__init__(model, batch_size)
        self.top_k = top_k

    def attribute(self, images: Images, labels: Labels | None = None, progress: Progress | None = None) -> ModelResult:
        """Every block's Fourier curve and variance (Figs 2a, 8, 9), the attention maps and the top-k
        predictions of `images` (files/PIL/arrays through the eval transform, or a preprocessed (N, 3, H, W)
        batch). Labels are not used."""
        model = self.model
        batch = self.inputs(images)
        specs = model.spec.blocks(model.module)
        meter = _BlockMeter(specs)
        recorder = None
        if model.spec.attention is not None:
            recorder = AttentionRecorder(model.spec.attention, specs, batch.shape[-1])
        names = model.spec.labels()
        predictions: list[list[Prediction]] = []
        meter.attach()
        if recorder:
            recorder.attach()
        try:
            with torch.inference_mode():
                for start in range(0, len(batch), self.batch_size):
                    if recorder:
                        recorder.start_batch()
                    logits = self.forward(batch[start : start + self.batch_size])
                    meter.end_batch()
                    if recorder:
                        recorder.end_batch()
                    predictions += self._top_k(logits, names)
                    if progress:
                        progress(min(start + self.batch_size, len(batch)), len(batch))
        finally:
            meter.detach()
            if recorder:
                recorder.detach()
        return ModelResult(
            name=model.name,
            label=model.spec.label,
            weights=model.weights,
            random_weights=model.random,
            dataset=model.spec.dataset,
            images=len(batch),
            predictions=predictions,
            blocks=meter.results(),
            attention=recorder.result() if recorder else None,
            input_images=as_seen(batch, model.transform),
        )

    def _top_k(self, logits: torch.Tensor, labels: Sequence[str]) -> list[list[Prediction]]:
        probs = logits.float().softmax(dim=-1).cpu()
        top = probs.topk(min(self.top_k, probs.shape[-1]), dim=-1)
        return [
            [Prediction(labels[i], int(i), float(p)) for p, i in zip(values.tolist(), indices.tolist())]
            for values, indices in zip(top.values, top.indices)
        ]


def analyze(
    images: Sequence[ImageInput],
    models: Sequence[str],
    weights: Weights | str = "pretrained",
    seed: int = 0,
    device: str = "auto",
    batch_size: int = 16,
    progress: Callable[[str], Progress] | None = None,
) -> Analysis:
    """Load each model and measure it on the images: the whole engine in one call.

    `progress(model_name)`, when given, returns the per-batch progress callback for that model.
    """
    loaded = [create_model(name, weights=weights, seed=seed, device=device) for name in models]
    pictures = [load_image(image) for image in images]
    results = [
        Analyzer(model, batch_size=batch_size).attribute(pictures, progress=progress(model.name) if progress else None)
        for model in loaded
    ]
    return Analysis(results, str(loaded[0].device) if loaded else device)
