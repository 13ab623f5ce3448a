"""Benchmark (not a test): dataset curves against plain inference over the same stream of images.

    .venv/bin/python bench/curves_speed.py [--data DIR|ZIP] [--images 256] [--batch-size 64]
        [--workers 2] [--device auto] [--model NAME ...]

Both read the same images through the same DataLoader (the model's eval transform, `--workers`
processes) at the same batch size; plain inference runs the model only, dataset curves also
measure every block (engine.analyses.dataset_curves). Without `--data` it writes `--images` random photos
to a temporary folder. Prints images/s of each and their ratio (the goal on a GPU: >= 0.9), and the
model's own rate on one batch already on the device, with no loading: when plain inference is far
below it, the DataLoader (JPEG decoding and resizing on the CPU) sets the pace, not the model.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `engine`

import engine  # noqa: E402
from engine.analyses.dataset_curves import DatasetCurves, ImageStream  # noqa: E402

HEADER = (
    "| model | device | images | batch | workers | inference (img/s) | curves (img/s) | ratio "
    "| model alone, batch on device (img/s) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|"
)


@dataclass
class CurvesSpeed:
    """Images/s of one model over one stream: the best of the runs."""

    model: str
    device: str
    images: int
    batch: int
    workers: int
    inference: float
    curves: float
    model_alone: float

    @property
    def ratio(self) -> float:
        return self.curves / self.inference

    def row(self) -> str:
        return (
            f"| {self.model} | {self.device} | {self.images} | {self.batch} | {self.workers} | {self.inference:.1f} "
            f"| {self.curves:.1f} | {self.ratio:.2f} | {self.model_alone:.1f} |"
        )


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def plain_inference(model: engine.LoadedModel, data: Path, batch_size: int, workers: int) -> float:
    """Images per second of the model alone over the stream."""
    stream = ImageStream(data, model.transform)
    loader = DataLoader(stream, batch_size, num_workers=workers, pin_memory=model.device.type == "cuda")
    synchronize(model.device)
    start = time.perf_counter()
    with torch.inference_mode():
        for images, _ in loader:
            model.module(images.to(model.device, non_blocking=True))
    synchronize(model.device)
    return len(stream) / (time.perf_counter() - start)


def dataset_curves(model: engine.LoadedModel, data: Path, batch_size: int, workers: int) -> float:
    synchronize(model.device)
    result = DatasetCurves(model, batch_size, workers).attribute(data)
    synchronize(model.device)
    return result.images_per_second


def model_alone(model: engine.LoadedModel, batch_size: int, repeats: int = 5) -> float:
    """Images per second of the model on one random batch already on its device."""
    shape = model.transform(Image.new("RGB", (256, 256))).shape
    x = torch.randn(batch_size, *shape, device=model.device)
    times = []
    with torch.inference_mode():
        model.module(x)
        for _ in range(repeats):
            synchronize(model.device)
            start = time.perf_counter()
            model.module(x)
            synchronize(model.device)
            times.append(time.perf_counter() - start)
    return batch_size / statistics.median(times)


def measure(model: engine.LoadedModel, data: Path, batch_size: int, workers: int, runs: int = 2) -> CurvesSpeed:
    """After a warm-up run (allocator, kernels, page cache), the best images/s of `runs` runs of each."""
    dataset_curves(model, data, batch_size, workers)
    pairs = [
        (plain_inference(model, data, batch_size, workers), dataset_curves(model, data, batch_size, workers))
        for _ in range(runs)
    ]
    images = len(ImageStream(data, model.transform))
    return CurvesSpeed(
        model.name,
        str(model.device),
        images,
        batch_size,
        workers,
        max(p[0] for p in pairs),
        max(p[1] for p in pairs),
        model_alone(model, batch_size),
    )


def random_photos(folder: Path, count: int) -> Path:
    """`count` random 400x300 JPEGs in `folder`."""
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
        print(f"{data}: batch {args.batch_size}, {args.workers} workers, torch threads {torch.get_num_threads()}")
        print(HEADER)
        for name in args.model or ["resnet50", "vit_small_patch16_224"]:
            model = engine.create_model(name, "random", device=args.device)
            print(measure(model, data, args.batch_size, args.workers).row(), flush=True)


if __name__ == "__main__":
    main()
