"""Attribution benchmark (not a test): every map method's default settings, seconds for one image on this machine.

    .venv/bin/python bench/attribution_speed.py [--threads 2] [--repeats 3] [--models resnet50,vit_small_patch16_224]

Every method of engine.analyses.attributions at its defaults (and the attention maps with rollout: one recorded
forward pass, engine.Analyzer), on seeded random weights (the time does not depend on the weights), for the top-1
class of assets/samples/cat.jpg: one warm-up run, then the median of `--repeats`. Each row also gives the method's
model work (`cost()`: images through a forward pass only / through a forward and a backward pass) and the engine's
`estimate` made before the method's first run (from one timed image, then from the maps before it), and the CPU
seconds the process used per run divided by the threads. On a shared, loaded machine the wall time is pessimistic;
the CPU time is nearer what free cores take, though waiting OpenMP threads spin and inflate it too. Target: every
default within 5 s (wall) on ResNet-50 and ViT-S/16 at 2 threads. Prints a Markdown table with the date, the CPU,
its bf16/AMX flags and the load average.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.analyses.attributions import (  # noqa: E402
    METHODS,
    IntegratedGradients,
    Occlusion,
    SmoothGrad,
    estimate,
    unsupported,
)

MODELS = "resnet50,vit_small_patch16_224"
ATTENTION = "Attention + rollout"
TARGET_S = 5.0


def cpu_flags() -> str:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    flags = [flag for flag in ("avx512_bf16", "amx_bf16", "avx2") if f" {flag}" in text]
    return ", ".join(flags) or "no AVX2"


def seconds(run, repeats: int) -> tuple[float, float]:
    """Median wall seconds and median process CPU seconds per thread of `repeats` runs after a warm-up."""
    run()  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append((time.process_time() - start_cpu) / torch.get_num_threads())
    return statistics.median(wall), statistics.median(cpu)


def settings(analysis) -> str:
    """The method's default settings, as the table shows them."""
    if isinstance(analysis, IntegratedGradients):
        return f"{analysis.steps} steps"
    if isinstance(analysis, SmoothGrad):
        return f"{analysis.samples} samples"
    if isinstance(analysis, Occlusion):
        side = round((analysis.cost().forward - 1) ** 0.5)
        return f"{analysis.window} px windows, stride {analysis.stride} ({side} x {side})"
    return "one pass"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--models", default=MODELS)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    image = Image.open(ROOT / "assets" / "samples" / "cat.jpg").convert("RGB")
    print(
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, {cpu_flags()}, load average {os.getloadavg()[0]:.1f}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads; one image, default settings, seconds (median of {args.repeats})\n"
    )
    columns = "model, method, default settings, images fwd / fwd+bwd, estimate s, wall s, CPU s / threads, within 5 s"
    print("| " + " | ".join(columns.split(", ")) + " |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for name in args.models.split(","):
        model = engine.create_model(name, "random", device="cpu")
        for method in [ATTENTION, *METHODS]:
            if method == ATTENTION:
                if model.spec.attention is None:
                    continue
                run = lambda: engine.Analyzer(model, batch_size=1).attribute([image])  # noqa: E731
                setting, work, expected = "one recorded pass", "1 / 0", "-"
            elif unsupported(method, model):
                continue
            else:
                analysis = METHODS[method](model)
                run = lambda analysis=analysis: analysis.attribute(image)  # noqa: E731
                guess = estimate(analysis)
                setting, work = settings(analysis), f"{guess.cost.forward} / {guess.cost.backward}"
                expected = f"{guess.seconds:.1f}"
            took, cpu = seconds(run, args.repeats)
            verdict = "yes" if took <= TARGET_S else "**no**"
            row = [model.spec.label, method, setting, work, expected, f"{took:.2f}", f"{cpu:.2f}", verdict]
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
