"""The GPU seconds each kind of model job asks ZeroGPU for (app/server/gpu_cost.py), as docs/serving.md lists them.

    .venv/bin/python bench/zero_gpu_durations.py

Counted without a GPU: FLOPs on the meta device (the CIFAR models on the CPU), the cost model's rates and margin.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `app`

from app.backend.cifar_lab import CifarLab  # noqa: E402
from app.backend.service import Service  # noqa: E402
from app.exports.paper_findings import PaperFindings  # noqa: E402
from app.server import gpu_cost  # noqa: E402
from app.server.zero_gpu import Job  # noqa: E402

CIFAR = ["preact_resnet", "alternet", "vit_cifar"]


def on(name: str) -> SimpleNamespace:
    """A stand-in for a run of model `name`: what the cost model reads of it."""
    return SimpleNamespace(result=SimpleNamespace(name=name))


JOBS = {
    "Analyze, ResNet-50 + ViT-S/16": (Service, "_analyze", (None, ["resnet50", "vit_small_patch16_224"])),
    "Analyze, the three CIFAR-10 models": (Service, "_analyze", (None, CIFAR)),
    "Saliency map, ViT-S/16": (Service, "_attribution", (on("vit_small_patch16_224"), "Saliency", 0, 0)),
    "Integrated Gradients, 128 steps, ResNet-50": (
        Service,
        "_attribution",
        (on("resnet50"), "Integrated Gradients", 0, 128),
    ),
    "Occlusion, ResNet-50": (Service, "_attribution", (on("resnet50"), "Occlusion", 0, 0)),
    "a map's check, ViT-S/16": (Service, "_faithfulness", (on("vit_small_patch16_224"), None, 0, "Saliency", None)),
    "AlterNet tab, 1,000 subset images": (CifarLab, "analyze_subset", (None, 1000)),
    "a Paper recompute, 200 images": (PaperFindings, "recompute", ("hessian", 200)),
}


def main() -> None:
    print("| job | asks for |\n|---|---|")
    for name, (owner, method, args) in JOBS.items():
        job = Job(owner, Service, method, args, {}, models=gpu_cost.models_of(method, args, {}))
        print(f"| {name} | {gpu_cost.seconds(job)} s |")


if __name__ == "__main__":
    main()
