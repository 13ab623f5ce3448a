"""Benchmark (not a test): training images/s of each member of the CIFAR-10 family on this machine, the trainer
as it was (fp32, eager) beside each change, in one run. Run it on an idle machine.

    .venv/bin/python bench/train_speed.py [--steps 8] [--only step6,vit] [--variants fp32,bf16,bf16+compile]
        [--width 64] [--device auto]

Variants: `fp32` (the trainer before: fp32, eager, AdamW's default foreach step), `bf16` (bf16 autocast, and
channels_last for the CNNs, as the trainer's `--precision auto` runs on a CPU with bf16 units), `+compile`
(torch.compile of the model, inductor's CPU backend; compile time is not counted), `+fused` (AdamW's fused
step) and `+explicit` (timm's attention layers on their explicit path, not the fused flash-attention kernel; the
trainer does this in bf16 on a CPU). channels_last follows each member's recipe in scripts/train_family.py,
which leaves it off for the ViT. `--width` sets the CNNs' base width (the family's is 16, the paper's 64).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent.parent / "scripts")]

from train_family import ORDER, family, recipe_args  # noqa: E402

from engine.models.registry import get_spec, resolve_device  # noqa: E402
from engine.training.train import TrainConfig, cpu_has_bf16, explicit_attention  # noqa: E402


@dataclass(frozen=True)
class Variant:
    """One way of running the training step."""

    name: str
    bf16: bool
    compile: bool = False
    fused: bool = False
    explicit: bool = False

    @classmethod
    def parse(cls, name: str) -> Variant:
        parts = name.split("+")
        if parts[0] not in ("fp32", "bf16") or not set(parts[1:]) <= {"compile", "fused", "explicit"}:
            raise SystemExit(f"unknown variant {name!r}: fp32 or bf16, then +compile, +fused, +explicit")
        return cls(name, parts[0] == "bf16", "compile" in parts, "fused" in parts, "explicit" in parts)


@dataclass
class Speed:
    images_per_s: float
    compile_s: float


def images_per_s(
    module: torch.nn.Module, variant: Variant, channels_last: bool, device: torch.device, batch: int, steps: int
) -> Speed:
    """Images/s of `steps` optimizer steps at batch `batch` on random CIFAR-sized inputs, after two warm-up
    steps (which, with +compile, hold the compilation, timed apart)."""
    module = module.to(device).train()
    if variant.explicit:
        explicit_attention(module, device, "bf16" if variant.bf16 else "fp32")
    channels_last = channels_last and variant.bf16
    if channels_last:
        module = module.to(memory_format=torch.channels_last)
    step_model = torch.compile(module) if variant.compile else module
    optimizer = torch.optim.AdamW(module.parameters(), lr=1e-3, fused=variant.fused or None)
    x, y = torch.randn(batch, 3, 32, 32, device=device), torch.randint(0, 10, (batch,), device=device)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    warm = time.perf_counter()
    for step in range(steps + 2):  # two warm-up steps
        if step == 2:
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
        with torch.autocast(device.type, torch.bfloat16, enabled=variant.bf16):
            loss = F.cross_entropy(step_model(x).float(), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return Speed(batch * steps / (time.perf_counter() - start), start - warm)


def member(name: str, width: int | None = None) -> tuple[torch.nn.Module, bool, str]:
    """Member `name` of the family built with seed 0 (at base `width` for the CNNs), whether its recipe trains it
    channels_last, and its registry name."""
    model_args = family()[name][0]
    cfg = TrainConfig(model=model_args[1], msa=model_args[3] if len(model_args) > 2 else None)
    if width is not None and cfg.model != "vit_cifar":
        cfg.width = width
    torch.manual_seed(0)
    return get_spec(cfg.model).build(**cfg.build_options(10)), "--channels-last" in recipe_args(name), cfg.model


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--device", default="auto")
    p.add_argument("--only", default=",".join(ORDER))
    p.add_argument("--variants", default="fp32,bf16,bf16+explicit,bf16+explicit+compile,bf16+explicit+fused")
    p.add_argument("--width", type=int, help="the CNNs' base width (default: the family's, 16)")
    args = p.parse_args()
    device = resolve_device(args.device)
    variants = [Variant.parse(v) for v in args.variants.split(",")]
    cpuinfo = Path("/proc/cpuinfo")
    flags = [f for f in ("avx512_bf16", "amx_bf16") if cpuinfo.exists() and f in cpuinfo.read_text()]
    print(
        f"device {device}, {torch.get_num_threads()} threads, CPU flags: {', '.join(flags) or 'no bf16 units'}"
        f" (bf16 units: {cpu_has_bf16()}), batch {args.batch_size}, torch {torch.__version__}"
    )
    print("| member | " + " | ".join(f"{v.name} images/s" for v in variants) + " | best vs fp32 |")
    print("|---|" + "---:|" * (len(variants) + 1))
    for name in args.only.split(","):
        cells, rates = [], []
        for variant in variants:
            module, channels_last, model_name = member(name, args.width)
            speed = images_per_s(module, variant, channels_last, device, args.batch_size, args.steps)
            rates.append(speed.images_per_s)
            compiled = f" ({speed.compile_s:.0f} s to compile)" if variant.compile else ""
            cells.append(f"{speed.images_per_s:.1f}{compiled}")
            torch._dynamo.reset()
        print(f"| {name}: {model_name} | " + " | ".join(cells) + f" | {max(rates) / rates[0]:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
