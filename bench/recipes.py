"""Benchmark (not a test): candidate training recipes compared on equal short runs, the table behind the family's
recipe choice. Each candidate trains one model for the same number of epochs with the same seed, its schedule
(warmup, then decay to zero) fitted to that length, and is evaluated on the full 10,000 test images with and
without flip test-time augmentation, and, where it keeps a moving average of the weights, with the raw weights.

    .venv/bin/python bench/recipes.py [--epochs 2] [--only adamw-2e-3,sgd-512] [--data .data/cifar10-jpeg]

Runs write under $TMPDIR (nothing enters the work tree). Run it on an idle machine: one run is 5-10 minutes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

from train_family import ensure_data  # noqa: E402

SHORT = ["--mixup", "0", "--cutmix", "0", "--drop-path", "0", "--seed", "0", "--precision", "auto", "--compile"]
SHORT += ["--trajectory-points", "0", "--warmup-epochs", "0.2"]


@dataclass(frozen=True)
class Candidate:
    name: str
    model: list[str]
    recipe: list[str]
    summary: str


STEP6 = ["--model", "alternet", "--msa", "s2:4,s3:2,s3:4,s3:6,s4:2,s4:4", "--channels-last"]
VIT = ["--model", "vit_cifar"]
ADAMW = ["--optimizer", "adamw", "--batch-size", "128", "--weight-decay", "0.05", "--smoothing", "0.1"]
CANDIDATES = [
    Candidate("adamw-2e-3", STEP6, [*ADAMW, "--lr", "2e-3", "--ema", "0.999"], "AdamW 2e-3, batch 128, EMA (chosen)"),
    Candidate("adamw-1e-3", STEP6, [*ADAMW, "--lr", "1e-3", "--ema", "0.999"], "AdamW 1e-3, batch 128, EMA"),
    Candidate(
        "sgd-512",
        STEP6,
        ["--optimizer", "sgd", "--batch-size", "512", "--lr", "0.2", "--weight-decay", "5e-4", "--smoothing", "0.2"]
        + ["--ema", "0.999"],
        "Nesterov SGD 0.2, batch 512, wd 5e-4, smoothing 0.2, EMA",
    ),
    Candidate(
        "sgd-128",
        STEP6,
        ["--optimizer", "sgd", "--batch-size", "128", "--lr", "0.1", "--weight-decay", "5e-4", "--smoothing", "0.2"]
        + ["--ema", "0.999"],
        "Nesterov SGD 0.1, batch 128, wd 5e-4, smoothing 0.2, EMA",
    ),
    Candidate("vit-adamw-1e-3", VIT, [*ADAMW, "--lr", "1e-3", "--ema", "0.999"], "AdamW 1e-3, batch 128, EMA (chosen)"),
    Candidate("vit-adamw-2e-3", VIT, [*ADAMW, "--lr", "2e-3", "--ema", "0.999"], "AdamW 2e-3, batch 128, EMA"),
]


def run(candidate: Candidate, epochs: int, data: str, folder: Path) -> dict:
    """Train `candidate` for `epochs`, return its sidecar."""
    out = folder / candidate.name
    command = [sys.executable, "-m", "engine.training.train", *candidate.model, "--data", data, "--epochs", str(epochs)]
    subprocess.run([*command, *candidate.recipe, *SHORT, "--out", str(out)], cwd=REPO, check=True)
    return json.loads(out.with_suffix(".json").read_text())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--data", default=".data/cifar10-jpeg")
    p.add_argument("--only", default=",".join(c.name for c in CANDIDATES))
    args = p.parse_args()
    ensure_data(args.data)
    chosen = [c for c in CANDIDATES if c.name in args.only.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for candidate in chosen:
            start = time.time()
            meta = run(candidate, args.epochs, args.data, Path(folder))
            raw = meta.get("raw_test_accuracy")
            rows.append(
                f"| {candidate.model[1]} | `{candidate.name}`: {candidate.summary} | {100 * meta['test_accuracy']:.1f}%"
                f" | {100 * meta['test_accuracy_flip']:.1f}% | {'-' if raw is None else f'{100 * raw:.1f}%'}"
                f" | {meta['test_nll']:.3f} | {(time.time() - start) / 60:.1f} |"
            )
            print(rows[-1], flush=True)
    print(f"\n{args.epochs} epochs each, seed 0, full CIFAR-10 test split (10,000 images, JPEG-q75 re-encoding)\n")
    print("| model | recipe | test acc. | flip TTA | raw weights | test NLL | minutes |")
    print("|---|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
