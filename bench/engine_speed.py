"""Benchmark (not a test): plain forward pass vs the engine's full analysis at 224x224.

    .venv/bin/python bench/engine_speed.py [--device cpu] [--repeats 7] [--batch 1] [--threads N]
        [--model NAME ...]

Prints, per model, the median time of a plain forward pass and of the full analysis of the same
preprocessed batch (`--batch` copies of one photo; 64 on a GPU) with `Analyzer.attribute`: the
forward pass with every block's Fourier curve and variance, attention maps, rollout and
distances, and the top-5. Then their ratio (goal: <= 1.15x), the official notebooks'
block-by-block procedure on the same input (keep every latent, then per latent a full 2-D FFT,
roll, diagonal, and torch.var; no attention) with its ratio, and the time of the eval transform
(resize, crop, normalize) that all of them need before them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `engine`

import engine
from engine.analyses.block_measures import watch_latents
from engine.measure import to_bchw


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start


def interleaved_medians(a, b, repeats: int) -> tuple[float, float]:
    """Median times of `a` and `b`, run alternately so that load on the machine hits both alike."""
    a(), b()  # warm-up
    pairs = [(seconds(a), seconds(b)) for _ in range(repeats)]
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
    import skimage.data

    image = Image.fromarray(skimage.data.chelsea())
    names = args.model or [n for n in engine.list_models() if engine.get_spec(n).dataset == "imagenet"]
    print(
        f"device {args.device}, torch threads {torch.get_num_threads()}, batch {args.batch}, median of {args.repeats}"
    )
    print(
        "| model | forward (ms) | full analysis (ms) | ratio | notebooks' procedure (ms) | ratio "
        "| eval transform (ms) |\n"
        "|---|---:|---:|---:|---:|---:|---:|"
    )
    for name in names:
        model = engine.create_model(name, weights="random", device=args.device)
        analyzer = engine.Analyzer(model, batch_size=args.batch)
        x = analyzer.inputs([image] * args.batch).to(model.device)

        def forward() -> None:
            with torch.inference_mode():
                model.module(x)

        plain, full = interleaved_medians(forward, lambda: analyzer.attribute(x), args.repeats)
        _, notebooks = interleaved_medians(forward, lambda: notebook_procedure(model, x), args.repeats)
        prep = statistics.median(seconds(lambda: analyzer.inputs([image] * args.batch)) for _ in range(args.repeats))
        print(
            f"| {name} | {plain * 1e3:.1f} | {full * 1e3:.1f} | {full / plain:.2f} | {notebooks * 1e3:.1f} | "
            f"{notebooks / plain:.2f} | {prep * 1e3:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
