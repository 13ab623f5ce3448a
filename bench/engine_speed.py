"""Benchmark (not a test): plain forward pass vs the engine's full analysis at 224x224.

    .venv/bin/python bench/engine_speed.py [--device cpu] [--repeats 7] [--batch 1] [--threads N]
        [--model NAME ...]

Prints, per model, the median time of a plain forward pass and of the full analysis of the same
preprocessed batch (`--batch` copies of one photo; 32 on a GPU) with `Analyzer.attribute`: the
forward pass with every block's Fourier curve and variance, attention maps, rollout and
distances, and the top-5. Then their ratio (goal: <= 1.15x on a CPU, <= 1.05x on a GPU), the
plain forward pass with timm's attention on its explicit path (q k^T, softmax, @ v: the path the
analysis must take to read the attention matrix; attention models only), the official notebooks'
block-by-block procedure on the same input (keep every latent, then per latent a full 2-D FFT,
roll, diagonal, and torch.var; no attention) with its ratio, and the time of the eval transform
(resize, crop, normalize) that all of them need before them. On a GPU every timing is bracketed
by torch.cuda.synchronize().
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `engine`

import engine  # noqa: E402
from engine.analyses.block_measures import watch_latents  # noqa: E402
from engine.analyses.measure import to_bchw  # noqa: E402

HEADER = (
    "| model | batch | forward (ms) | full analysis (ms) | ratio | forward, explicit attention (ms) "
    "| notebooks' procedure (ms) | ratio | eval transform (ms) |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)


@dataclass
class EngineTiming:
    """Median times in seconds of one model at one batch size."""

    model: str
    batch: int
    forward: float
    analysis: float
    explicit_forward: float | None  # None: the model has no timm attention layers
    notebooks: float
    transform: float

    @property
    def ratio(self) -> float:
        return self.analysis / self.forward

    def row(self) -> str:
        explicit = "n/a" if self.explicit_forward is None else f"{self.explicit_forward * 1e3:.1f}"
        return (
            f"| {self.model} | {self.batch} | {self.forward * 1e3:.1f} | {self.analysis * 1e3:.1f} | {self.ratio:.2f} "
            f"| {explicit} | {self.notebooks * 1e3:.1f} | {self.notebooks / self.forward:.2f} "
            f"| {self.transform * 1e3:.1f} |"
        )


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def seconds(fn: Callable[[], object], device: torch.device) -> float:
    """Wall time of `fn`, with the device's queue drained before and after."""
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start


def interleaved_medians(a, b, repeats: int, device: torch.device) -> tuple[float, float]:
    """Median times of `a` and `b`, run alternately so that load on the machine hits both alike."""
    a(), b()  # warm-up
    pairs = [(seconds(a, device), seconds(b, device)) for _ in range(repeats)]
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def notebook_procedure(model: engine.LoadedModel, x: torch.Tensor) -> list[tuple[torch.Tensor, float]]:
    """The notebooks' way: keep every block's latent, then measure them one by one (full FFT2, torch.var)."""
    specs = model.spec.blocks(model.module)
    latents: list[torch.Tensor] = [None] * len(specs)
    handles = watch_latents(specs, lambda index, latent: latents.__setitem__(index, latent))
    try:
        with torch.inference_mode():
            model.module(x).softmax(-1).topk(5)
            out = []
            for latent, spec in zip(latents, specs):
                z = to_bchw(latent, spec).float()
                h = z.shape[-1]
                amplitude = torch.log(torch.fft.fft2(z).abs() + 1e-6).mean(dim=(0, 1))
                diagonal = torch.roll(amplitude, shifts=(h // 2, h // 2), dims=(0, 1)).diagonal()[h // 2 :]
                out.append((diagonal - diagonal[0], float(z.var(dim=(-2, -1)).mean())))
    finally:
        for handle in handles:
            handle.remove()
    return out


@contextmanager
def explicit_attention(module: torch.nn.Module) -> Iterator[bool]:
    """timm's attention layers on their explicit path while inside; yields whether the model has any."""
    layers = [layer for layer in module.modules() if hasattr(layer, "fused_attn")]
    fused = [layer.fused_attn for layer in layers]
    for layer in layers:
        layer.fused_attn = False
    try:
        yield bool(layers)
    finally:
        for layer, was in zip(layers, fused):
            layer.fused_attn = was


def imagenet_models() -> list[str]:
    return [n for n in engine.list_models() if engine.get_spec(n).dataset == "imagenet"]


def photo() -> Image.Image:
    import skimage.data

    return Image.fromarray(skimage.data.chelsea())


def measure(model: engine.LoadedModel, image: Image.Image, batch: int, repeats: int) -> EngineTiming:
    """Every timing of `model` on `batch` copies of `image`."""
    analyzer = engine.Analyzer(model, batch_size=batch)
    x = analyzer.inputs([image] * batch).to(model.device)
    device = model.device

    def forward() -> None:
        with torch.inference_mode():
            model.module(x)

    plain, full = interleaved_medians(forward, lambda: analyzer.attribute(x), repeats, device)
    explicit = None
    with explicit_attention(model.module) as has_attention:
        if has_attention:
            explicit, _ = interleaved_medians(forward, lambda: None, repeats, device)
    _, notebooks = interleaved_medians(forward, lambda: notebook_procedure(model, x), repeats, device)
    prep = statistics.median(seconds(lambda: analyzer.inputs([image] * batch), device) for _ in range(repeats))
    return EngineTiming(model.name, batch, plain, full, explicit, notebooks, prep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--batch", type=int, default=1, help="images per pass (the analyzer's batch too)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's, one per core)")
    parser.add_argument("--model", action="append", help="default: every ImageNet model in the registry")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    image = photo()
    print(
        f"device {args.device}, torch threads {torch.get_num_threads()}, batch {args.batch}, median of {args.repeats}"
    )
    print(HEADER)
    for name in args.model or imagenet_models():
        model = engine.create_model(name, weights="random", device=args.device)
        print(measure(model, image, args.batch, args.repeats).row(), flush=True)


if __name__ == "__main__":
    main()
