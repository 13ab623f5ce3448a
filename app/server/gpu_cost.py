"""How many GPU seconds a model job asks ZeroGPU for, worked out before it runs (in the parent, without a GPU): from
each model's FLOPs per image (counted on the meta device: no memory, no arithmetic) and the image passes of the job,
at a conservative sustained rate, plus the worker's start (CUDA, the weights onto the GPU), with a margin; capped at
the free tier's per-call maximum. The visitor's quota is charged what is asked, used or not, and shorter requests get
priority, so the ask is the estimate, never the `spaces` package's 60 s default.

    seconds(job)  # -> 10 for a plain analysis of two ImageNet models; 120 at most
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import torch
from PIL import Image
from torch.utils.flop_counter import FlopCounterMode

from engine.analyses.attributions import IG_STEPS, SMOOTHGRAD_SAMPLES
from engine.analyses.faithfulness import STEPS as CHECK_STEPS

GPU_FLOPS = 5e12  # FLOP/s sustained at small batches in fp32 on a ZeroGPU slice (H200 MIG 3g: ~30 TFLOP/s peak)
PASS_S = 0.004  # at least this per image pass: kernel launches and copies
START_S = 6.0  # a worker's start: fork, CUDA init, the weights of the job's models onto the GPU
LOAD_S_PER_GB = 4.0  # weights read from the hub cache and moved, per GB, when a worker first uses a model
MARGIN = 2.0  # the estimate is doubled: a call past its duration is killed
MIN_S = 5
CAP_S = 120  # the free tier's most per call ("a few minutes" documented; 120 s asked by the platform's own examples)
OCCLUSION_PASSES = 200  # 14 x 14 windows and the clean image at 224 px


@lru_cache(maxsize=128)
def flops_and_bytes(name: str, options: tuple[tuple[str, Any], ...] = ()) -> tuple[int, int]:
    """(FLOPs of one image's forward pass, bytes of weights) of registry model `name`, built on the meta device (on
    the CPU where it cannot be built there: the small CIFAR-10 models); (2 x parameters x 197, 4 x parameters) where
    it cannot be counted."""
    import engine

    spec = engine.get_spec(name)
    try:
        try:
            with torch.device("meta"):
                module = spec.build(**dict(options)).eval()
        except (NotImplementedError, RuntimeError):
            module = spec.build(**dict(options)).eval()
        side = int(spec.transform(module)(Image.new("RGB", (8, 8))).shape[-1])
        device = next(module.parameters()).device
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            module(torch.zeros(1, 3, side, side, device=device))
        return int(counter.get_total_flops()), 4 * sum(p.numel() for p in module.parameters())
    except Exception:  # noqa: BLE001 - a model that cannot be counted: from its parameters
        parameters = spec.parameters or 25_000_000
        return 2 * parameters * 197, 4 * parameters


def passes(method: str, kwargs: dict, models: int) -> int:
    """Image passes (a backward pass counted as two forward passes) of job `method` over its `models`."""
    key = kwargs.get("key")  # a map's MapKey (app.backend.service), else its method and steps by name
    map_method = getattr(key, "method", None) or kwargs.get("method") or ""
    steps = getattr(key, "steps", None) or kwargs.get("steps")
    per_map = {
        "SmoothGrad": 3 * SMOOTHGRAD_SAMPLES,
        "Integrated Gradients": 3 * int(steps or IG_STEPS) + 2,
        "Occlusion": OCCLUSION_PASSES,
    }.get(map_method, 3)
    table = {
        "_analyze": 6 * models,  # the measured pass, the logit lens, Grad-CAM's forward and backward
        "lesioned": 6,
        "_attribution": per_map,
        "_faithfulness": 2 * 4 * (CHECK_STEPS + 1),  # deletion and insertion, the map and 3 random orders
        "_analyze_photo": 3,
        "analyze_subset": 3 * int(kwargs.get("count") or 1000),
        "_photo_noise": 3 * 20,
        "recompute": 3 * 2 * int(kwargs.get("images") or 200) * 10,
        "_dataset_curves": 500 * models,
    }
    return table.get(method, 10 * max(models, 1))


def seconds(job: Any) -> int:
    """The GPU seconds to ask for `job` (app.server.zero_gpu.Job), MIN_S to CAP_S."""
    models = job.models or ("vit_cifar",)
    costs = [flops_and_bytes(name) for name in models]
    per_pass = sum(max(flops / GPU_FLOPS, PASS_S) for flops, _ in costs) / len(costs)
    work = passes(job.method, {**job.kwargs, **_named_args(job)}, len(models)) * per_pass
    start = START_S + sum(size for _, size in costs) / 2**30 * LOAD_S_PER_GB
    return int(min(CAP_S, max(MIN_S, math.ceil(MARGIN * (start + work)))))


def _named_args(job: Any) -> dict:
    """The job's positional arguments that the cost reads, by name (a map's method and steps, a subset's count)."""
    import inspect

    method = getattr(job.owner, job.method)
    names = list(inspect.signature(getattr(method, "__wrapped__", method)).parameters)[1:]
    return dict(zip(names, job.args))


def models_of(method: str, args: tuple, kwargs: dict) -> tuple[str, ...]:
    """The registry names a job runs: the names it is given, or the model of the run it works on."""
    found: list[str] = []
    for value in [*args, *kwargs.values()]:
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            found += list(value)
        elif (result := getattr(value, "result", None)) is not None and isinstance(getattr(result, "name", 0), str):
            found.append(result.name)
    if method in ("_analyze_photo", "analyze_subset"):
        found += ["alternet", "preact_resnet", "vit_cifar"]
    if method in ("recompute", "_photo_noise"):
        found += ["preact_resnet", "alternet", "vit_cifar"]
    return tuple(dict.fromkeys(found))
