"""Report (not a test): do the paper's claims hold on the bundled CIFAR-10 models?

    .venv/bin/python bench/paper_claims.py [--weights pretrained|random] [--limit N] [--width W] [--stored]

Over the bundled test subset (assets/cifar10_test_subset.npz, 1,000 images), per model:
- Fig 9: the share of MSA units that lower the feature-map variance (variance after the unit below
  the one before it) and the share of Conv/MLP units that raise it;
- Fig 8: the same for the high-frequency Δ log amplitude;
- Fig 12a: the test-subset accuracy of each AlterNet build-up step, with the epochs it was trained for;
then the stored paper figures (assets/paper_figures.json), each member's numbers in a line, with the
checkpoint each was measured on (`--stored` prints only these, at once).
Subsampling (pool) blocks and the stem are left out of the shares: the claims are about units that
keep the resolution. Models without a bundled checkpoint are listed as missing, never replaced by
random weights unless --weights random is asked for.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `engine`

import engine
from engine.checkpoint import read_meta
from engine.cifar_subset import subset
from engine.claims import Count, Evidence
from engine.findings import PAPER_FIGURES, STORE
from engine.models import bundled_path
from engine.placement import PAPER_DEPTHS, buildup_sequence


def share(count: Count) -> float:
    return count.share if count.share is not None else float("nan")


def trained_for(name: str, build: dict, random: bool) -> str:
    """The bundled checkpoint's epochs ('-' for random weights): the family is retrained member by member,
    and only equal runs compare."""
    path = None if random else bundled_path(name, build)
    return "-" if path is None else f"{read_meta(path).epochs:g}"


def stored_figures() -> None:
    """Each stored figure's numbers per member, and each lesioned unit's drop (Fig 10b's claims are per unit)."""
    store = json.loads(STORE.read_text())["findings"]
    print("\nStored paper figures (assets/paper_figures.json):\n")
    for name, finding in PAPER_FIGURES.items():
        for run in store.get(name, {}).get("models", {}).values():
            result = run["result"]
            print(f"- {finding.figure} {name}, {run['label']} [{run['weights']}]: {finding.headline(result)}")
            if name == "lesion":
                drops = ", ".join(f"{unit['name']} {100 * unit['drop']:.1f}" for unit in result["units"])
                print(f"  drops in points: {drops}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", default="pretrained", help="pretrained (the bundled checkpoints) or random")
    parser.add_argument("--limit", type=int, default=1000, help="images of the subset to use, spread over the classes")
    parser.add_argument("--width", type=int, help="AlterNet/ResNet base width (random weights only)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--stored", action="store_true", help="only the stored paper figures' numbers")
    args = parser.parse_args()
    if args.stored:
        stored_figures()
        return
    all_images, all_labels = subset()
    pick = np.linspace(0, len(all_labels) - 1, min(args.limit, len(all_labels))).astype(int)  # all classes
    images, labels = all_images[pick], all_labels[pick]
    options = {} if args.width is None else {"width": args.width}
    runs = [("preact_resnet", "PreAct ResNet (step 0)", options)]
    runs += [
        ("alternet", f"AlterNet step {n}: {p}", {"msa": str(p), **options})
        for n, p in enumerate(buildup_sequence(PAPER_DEPTHS))
        if n > 0
    ]
    runs += [("vit_cifar", "ViT/4 (CIFAR)", {})]
    print(
        f"{len(images)} test images of the bundled subset (CIFAR-10, JPEG-q75 re-encoding), weights: {args.weights}\n"
    )
    print(
        "| model | epochs | accuracy | MSA lower variance | Conv/MLP raise variance | MSA lower high-freq "
        "| Conv/MLP raise high-freq |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, label, build in runs:
        try:
            model = engine.create_model(name, weights=args.weights, device=args.device, **build)
        except engine.WeightsUnavailableError:
            print(f"| {label} | no bundled checkpoint | | | | | |")
            continue
        result = engine.Analyzer(model, batch_size=100).attribute(list(images))
        accuracy = np.mean([p[0].index == y for p, y in zip(result.predictions, labels)])
        e = Evidence.of(result)
        counts = [
            e.msa_lower_variance,
            e.others_raise_variance,
            e.msa_lower_high_frequency,
            e.others_raise_high_frequency,
        ]
        cells = [share(count) for count in counts]
        shares = " | ".join(f"{c:.0%}" if c == c else "-" for c in cells)
        print(f"| {label} | {trained_for(name, build, model.random)} | {accuracy:.1%} | {shares} |", flush=True)
    stored_figures()


if __name__ == "__main__":
    main()
