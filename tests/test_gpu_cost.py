"""The GPU seconds a ZeroGPU call asks for: FLOPs counted on the meta device agree with the published count, every
ask is within the free tier's cap and never the package's 60 s default, and more work asks for more."""

from __future__ import annotations

from types import SimpleNamespace

from app.backend.cifar_lab import CifarLab
from app.backend.service import MapKey, Service
from app.server import gpu_cost
from app.server.zero_gpu import Job


def test_flops_agree_with_the_published_count():
    flops, size = gpu_cost.flops_and_bytes("resnet50")
    assert abs(flops / 2 - 4.09e9) / 4.09e9 < 0.02  # ResNet-50: 4.09 G multiply-adds at 224 px (He et al.; timm)
    assert size == 4 * 25_557_032  # its parameters in fp32
    flops, _ = gpu_cost.flops_and_bytes("alternet")  # a CIFAR model, built on the CPU: docs/engine.md's 0.20 GFLOPs
    assert 0.19e9 < flops < 0.21e9


def test_asks_are_within_the_cap_and_grow_with_the_work():
    run = SimpleNamespace(result=SimpleNamespace(name="resnet50"))

    def asked(method: str, args: tuple, owner: type = Service) -> int:
        models = gpu_cost.models_of(method, args, {})
        return gpu_cost.seconds(Job(owner, Service, method, args, {}, models=models))

    plain = asked("_analyze", (None, ["resnet50"]))
    saliency = asked("_attribution", (run, MapKey.of("Saliency", 0)))
    steps_8 = asked("_attribution", (run, MapKey.of("Integrated Gradients", 0, 8)))
    steps_128 = asked("_attribution", (run, MapKey.of("Integrated Gradients", 0, 128)))
    subset = asked("analyze_subset", (None, 1000), CifarLab)
    every = [plain, saliency, steps_8, steps_128, subset]
    assert all(gpu_cost.MIN_S <= seconds <= gpu_cost.CAP_S and seconds != 60 for seconds in every), every
    assert steps_128 > steps_8 >= saliency and subset > plain, every
