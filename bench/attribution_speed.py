"""Attribution benchmark (not a test): seconds per method per model for one image on this machine.

    .venv/bin/python bench/attribution_speed.py [--repeats 3] [--models resnet50,vit_small_patch16_224,...]

Every method of engine.analyses.attributions (Integrated Gradients with 32 steps) and the attention maps
with rollout (one recorded forward pass, engine.Analyzer), on seeded random weights (the time does not
depend on the weights), one warm-up run then the median of `--repeats`. Prints a Markdown table with the
CPU and its bf16/AMX flags. Targets on a CPU at one image: one-pass methods under 1 s for the ImageNet
models, IG under 10 s, every method under 1 s on the CIFAR models.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.analyses.attributions import METHODS, unsupported  # noqa: E402

MODELS = "resnet50,vit_small_patch16_224,swin_tiny_patch4_window7_224,preact_resnet,alternet,vit_cifar"
ATTENTION = "One pass: attention, rollout, curves"


def cpu_flags() -> str:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    flags = [flag for flag in ("avx512_bf16", "amx_bf16") if flag in text]
    return ", ".join(flags) or "no bf16 units"


def seconds(run, repeats: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--models", default=MODELS)
    args = p.parse_args()
    image = Image.open(ROOT / "assets" / "samples" / "cat.jpg").convert("RGB")
    methods = [ATTENTION, *METHODS]
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {cpu_flags()}, "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; one image, seconds (median of {args.repeats})\n"
    )
    print("| model | " + " | ".join(methods) + " |")
    print("|---|" + "---:|" * len(methods))
    for name in args.models.split(","):
        model = engine.create_model(name, "random", device="cpu")
        cells = []
        for method in methods:
            if method == ATTENTION:
                if model.spec.attention is None:
                    cells.append("n/a")
                    continue
                run = lambda: engine.Analyzer(model, batch_size=1).attribute([image])  # noqa: E731
            elif unsupported(method, model):
                cells.append("n/a")
                continue
            else:
                analysis = METHODS[method](model)
                run = lambda analysis=analysis: analysis.attribute(image)  # noqa: E731
            cells.append(f"{seconds(run, args.repeats):.2f}")
            print(f"  {name} {method}: {cells[-1]} s", file=sys.stderr, flush=True)  # progress, for slow models
        print(f"| {model.spec.label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
