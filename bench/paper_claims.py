"""Report (not a test): do the paper's claims hold on the bundled CIFAR-10 models, and how sure is each verdict?

    .venv/bin/python bench/paper_claims.py [--measure [--weights pretrained|random] [--limit N] [--width W]]
                                           [--stored]

Prints, from the stored results in assets/ (at once):
- Fig 12a: each build-up step's runs (seeds) and accuracy on the 10,000 CIFAR-10 test images, and its paired
  difference to the CNN (step 0) on the same images: paired bootstrap 95% interval and McNemar's exact p
  (engine.paper.paired; the bits are assets/checkpoints/*.correct.npz, made by scripts/score_test_split.py);
- Fig 12b: each member's accuracy on the stored corrupted images and its paired difference to the CNN on the same
  images, the 70 corrupted copies of each test image resampled and tested together (`scripts/score_test_split.py
  --corruption` stores the bits);
- Figs 8 and 9 per model over the bundled test subset (assets/unit_claims.json, `python -m engine.paper.unit_spread`):
  how many MSA units lower the feature-map variance and the high-frequency Δ log amplitude, how many Conv/MLP units
  raise them, each count with its bootstrap interval over the images; `--measure` measures them again instead;
- every claim's verdict (engine.paper.verdicts: the same as the README's table, the tour and the Paper figures tab);
- with `--stored`, each stored paper figure's numbers per member, and each lesioned unit's drop.
Subsampling (pool) blocks and the stem are left out of the counts: the claims are about units that keep the
resolution. Random-weight models (`--measure --weights random`) are the architecture alone, never a verdict.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `engine`

import engine
from engine.data.cifar_subset import subset
from engine.paper import buildup, unit_spread
from engine.paper.findings import PAPER_FIGURES, STORE, member_label, members, unpack_bits
from engine.paper.paired import p_value, paired, points
from engine.paper.verdicts import all_verdicts, corrupted_differences

COUNTS = ("msa_lower_variance", "others_raise_variance", "msa_lower_high_frequency", "others_raise_high_frequency")


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


def missing(ours: list[buildup.Run], cnn: list[buildup.Run]) -> str:
    """Why a step has no paired difference: whose per-image bits are missing."""
    unscored = [name for name, runs in (("this step", ours), ("step 0", cnn)) if not runs or runs[0].correct is None]
    return f"no per-image bits for {' and '.join(unscored)} (scripts/score_test_split.py)" if unscored else "-"


def buildup_report() -> None:
    """Fig 12a: each step's seeds and its paired difference to the CNN on the 10,000 test images."""
    runs = buildup.buildup_runs()
    differences = buildup.step_differences(runs)
    print("Fig 12a: CIFAR-10 test accuracy (10,000 images) and the paired difference to the CNN (step 0, seed 0)\n")
    print("| step | epochs | accuracy (seeds) | − step 0, points [95% paired bootstrap] | McNemar p | reading |")
    print("|---|---:|---|---|---:|---|")
    for step, step_runs in runs.items():
        d = differences.get(step)
        paired_cells = (
            f"{points(d.difference)} points {d.interval()} | {d.p:.2g} | {d.outcome}"
            if d
            else ("- | - | the reference" if step == 0 else f"- | - | {missing(step_runs, runs.get(0, []))}")
        )
        print(f"| {step} | {step_runs[0].epochs:g} | {buildup.seeds_text(step_runs)} | {paired_cells} |")
    for seed, d in buildup.seed_pairs(runs)[1:]:
        print(f"- seed pair {seed}: {d.sentence()}")
    if (over := buildup.seed_difference(runs)) is not None:
        print(f"- {over.sentence()}")
    print()


def corruption_report() -> None:
    """Fig 12b: each member's accuracy on the stored corrupted images and its paired difference to the CNN on the
    same images, the copies of one test image resampled and tested together (and McNemar's p were they not)."""
    section = json.loads(STORE.read_text())["findings"].get("corruption")
    if not section or "correct" not in section["models"].get("step0", {}):
        print("Fig 12b: no per-image results stored (scripts/score_test_split.py --corruption)\n")
        return
    first = section["models"]["step0"]["result"]
    cells = len(first["corruptions"]) * len(first["severities"])
    count = cells * section["images"]
    print(
        f"Fig 12b: accuracy on {count:,} corrupted images ({len(first['corruptions'])} corruptions × "
        f"{len(first['severities'])} severities of {section['images']} test images) and the paired difference to the "
        f"CNN (step 0): 95% bootstrap over the {section['images']} test images and McNemar's exact test by test image "
        "(an exact sign-flip test over them: the 70 copies of one image are not independent)\n"
    )
    print("| member | corrupted accuracy | − step 0, points [95%] | p | reading | p, copies counted apart |")
    print("|---|---:|---|---:|---|---:|")
    cnn = unpack_bits(section["models"]["step0"]["correct"], count)
    print(f"| {section['models']['step0']['label']} | {cnn.mean():.2%} | - | - | the reference | - |")
    for key, d in corrupted_differences(section).items():
        apart = paired(unpack_bits(section["models"][key]["correct"], count), cnn)
        cells_text = f"{points(d.difference)} points {d.interval()} | {p_value(d.p)} | {d.outcome} | {p_value(apart.p)}"
        print(f"| {d.a} | {d.accuracy_a:.2%} | {cells_text} |")
    print()


def unit_rows(spreads: dict[str, unit_spread.UnitSpread], random: bool) -> None:
    """Figs 8 and 9: the four counts per model, each with its interval over the images."""
    weights = "random weights: architecture alone, not a test of the claim" if random else "trained"
    images = next(iter(spreads.values())).images if spreads else 0
    print(f"Figs 8 and 9 over {images} images of the bundled test subset ({weights}); 95% over images in brackets\n")
    print("| model | MSA lower variance | Conv/MLP raise variance | MSA lower high-freq | Conv/MLP raise high-freq |")
    print("|---|---|---|---|---|")
    for spread in spreads.values():
        cells = [getattr(spread, name) for name in COUNTS]
        shown = [
            "-" if c.units == 0 else f"{c.changed} of {c.units}" + ("" if c.low == c.high else f" [{c.low}-{c.high}]")
            for c in cells
        ]
        print(f"| {spread.label} | {' | '.join(shown)} |", flush=True)
    print()


def measured(weights: str, limit: int, width: int | None) -> dict[str, unit_spread.UnitSpread]:
    """Every member's unit spread measured now on `limit` subset images spread over the classes."""
    images = subset()[0]
    pick = np.linspace(0, len(images) - 1, min(limit, len(images))).astype(int)
    out = {}
    for key, (name, options) in members().items():
        build = {**options, **({"width": width} if width and name != "vit_cifar" else {})}
        out[key] = unit_spread.measure(engine.create_model(name, weights, **build), member_label(key), images[pick])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--measure", action="store_true", help="measure the per-unit counts now, not from the store")
    parser.add_argument("--weights", default="pretrained", help="with --measure: pretrained or random")
    parser.add_argument("--limit", type=int, default=1000, help="with --measure: subset images, over the classes")
    parser.add_argument("--width", type=int, help="with --measure: AlterNet/ResNet base width (random weights)")
    parser.add_argument("--stored", action="store_true", help="also each stored paper figure's numbers")
    args = parser.parse_args()
    buildup_report()
    corruption_report()
    if args.measure:
        unit_rows(measured(args.weights, args.limit, args.width), args.weights == "random")
    else:
        unit_rows(unit_spread.stored(), False)
    print("Verdicts (engine.paper.verdicts; the README's claims table):\n")
    for verdict in all_verdicts():
        print(f"- {verdict.claim} ({verdict.figure}): {verdict.line()}\n")
    if args.stored:
        stored_figures()


if __name__ == "__main__":
    main()
