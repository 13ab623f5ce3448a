"""Benchmark (not a test): dataset curves against plain inference over the same stream of images.

    .venv/bin/python bench/curves_speed.py [--data DIR|ZIP] [--images 256] [--batch-size 64]
        [--workers 2] [--device auto] [--model NAME ...]

Both read the same images through the same DataLoader (the model's eval transform, `--workers`
processes) at the same batch size; plain inference runs the model only, dataset curves also
measure every block (engine.analyses.dataset_curves). Without `--data` it writes `--images` random photos
to a temporary folder. Prints images/s of each and their ratio (the goal on a GPU: >= 0.9).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `engine`

import engine
from engine.analyses.dataset_curves import DatasetCurves, ImageStream


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def plain_inference(model: engine.LoadedModel, data: Path, batch_size: int, workers: int) -> float:
    """Images per second of the model alone over the stream."""
    stream = ImageStream(data, model.transform)
    loader = DataLoader(stream, batch_size, num_workers=workers, pin_memory=model.device.type == "cuda")
    start = time.perf_counter()
    with torch.inference_mode():
        for images, _ in loader:
            model.module(images.to(model.device, non_blocking=True))
    synchronize(model.device)
    return len(stream) / (time.perf_counter() - start)


def dataset_curves(model: engine.LoadedModel, data: Path, batch_size: int, workers: int) -> float:
    result = DatasetCurves(model, batch_size, workers).attribute(data)
    synchronize(model.device)
    return result.images_per_second


def random_photos(folder: Path, count: int) -> Path:
    rng = np.random.default_rng(0)
    for i in range(count):
        Image.fromarray(rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)).save(folder / f"{i:05d}.jpg")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a folder or ZIP of images (default: random photos)")
    parser.add_argument("--images", type=int, default=256, help="random photos to write without --data")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--model", action="append", help="default: resnet50, vit_small_patch16_224")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or random_photos(Path(tmp), args.images)
        print(
            f"{data}: {len(ImageStream(data, lambda image: image))} images, batch {args.batch_size}, "
            f"{args.workers} workers, torch threads {torch.get_num_threads()}"
        )
        print(f"{'model':<26} {'device':<7} {'inference img/s':>16} {'curves img/s':>13} {'ratio':>6}")
        for name in args.model or ["resnet50", "vit_small_patch16_224"]:
            model = engine.create_model(name, "random", device=args.device)
            dataset_curves(model, data, args.batch_size, args.workers)  # warm-up: allocator, kernels, page cache
            runs = [
                (
                    plain_inference(model, data, args.batch_size, args.workers),
                    dataset_curves(model, data, args.batch_size, args.workers),
                )
                for _ in range(2)
            ]
            plain, curves = max(r[0] for r in runs), max(r[1] for r in runs)
            print(
                f"{name:<26} {str(model.device):<7} {plain:>16.1f} {curves:>13.1f} {curves / plain:>6.2f}", flush=True
            )


if __name__ == "__main__":
    main()
