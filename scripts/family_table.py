"""The tables of the bundled CIFAR-10 family: each member's test accuracy from engine.models.member_accuracy (the
mean over its bundled seeds, `<stem>-seed<N>`, where there are several: the one number the app shows), and the rest
from its seed-0 checkpoint's sidecar; the full one for docs/training.md (printed here) and the README's short one
(`readme_table`, written by scripts/claims_table.py --write).

python scripts/family_table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from train_family import ORDER, family  # noqa: E402

from engine.models.checkpoint import read_meta  # noqa: E402
from engine.models.cifar_family import CHECKPOINTS  # noqa: E402
from engine.models.cost import params_and_flops  # noqa: E402
from engine.models.member_accuracy import member_accuracy  # noqa: E402
from engine.models.registry import load_checkpoint  # noqa: E402


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def readme_table() -> str:
    """The README's table: each member, its test accuracy (the mean and each seed's where there are several) and
    its epochs."""
    rows = ["| member | test accuracy | epochs |", "|---|---:|---:|"]
    members = family()
    for name in sorted(ORDER, key=lambda n: (n == "vit", n)):  # step0 .. step6, then the ViT
        stem = members[name][1]
        if not (CHECKPOINTS / f"{stem}.json").is_file():
            continue
        meta = read_meta(CHECKPOINTS / f"{stem}.safetensors")
        accuracy = member_accuracy(CHECKPOINTS / f"{stem}.safetensors").detailed()
        if name == "vit":
            label = "ViT (CIFAR)"
        elif name == "step0":
            label = "step 0: PreAct ResNet"
        else:
            paper = " (the paper's)" if name == "step6" else ""
            label = f"step {name[4:]}: AlterNet `{meta.options['msa']}`{paper}"
        rows.append(f"| {label} | {accuracy} | {meta.epochs:g} |")
    return "\n".join(rows)


def main() -> None:
    print(
        "| model | MSA blocks | params | GFLOPs | epochs | test acc. | seed 0: flip TTA | raw weights | test NLL "
        "| subset acc. | training img/s* | minutes |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    members = family()
    for name in sorted(ORDER, key=lambda n: (n == "vit", n)):  # step0 .. step6, then the ViT
        stem = members[name][1]
        if not (CHECKPOINTS / f"{stem}.json").is_file():
            print(f"| {name} ({stem}) | not trained yet | | | | | | | | | | | |")
            continue
        module, meta = load_checkpoint(CHECKPOINTS / stem)
        params, flops = params_and_flops(module)
        msa = meta.options.get("msa", "none" if meta.architecture == "preact_resnet" else "every block")
        label = f"{name}: {meta.architecture}" if name.startswith("step") else meta.architecture
        print(
            f"| {label} | `{msa}` | {params / 1e6:.2f} M | {flops / 1e9:.3f} | {meta.epochs:g} | "
            f"{member_accuracy(CHECKPOINTS / stem).short()} | {percent(meta.test_accuracy_flip)} | "
            f"{percent(meta.raw_test_accuracy)} | {meta.test_nll:.3f} | {100 * meta.subset_accuracy:.1f}% | "
            f"{meta.images_per_s:.0f} | {meta.minutes:.0f} |"
        )


if __name__ == "__main__":
    main()
