"""Benchmark (not a test): training images/s of each member of the CIFAR-10 family on this machine,
with the family's recipe (batch 128) and the trainer's precision choice. Run it on an idle machine.

    .venv/bin/python bench/train_speed.py [--steps 8] [--precision auto|bf16|fp32] [--only step6,vit]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent.parent / "scripts")]

from train_family import ORDER, family  # noqa: E402

from engine.registry import get_spec, resolve_device  # noqa: E402
from engine.train import TrainConfig, _memory_format, resolve_precision  # noqa: E402


def images_per_s(module: torch.nn.Module, precision: str, device: torch.device, batch: int, steps: int) -> float:
    module = module.to(device).train()
    if precision == "bf16":
        module = module.to(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(module.parameters(), lr=1e-3)
    x, y = torch.randn(batch, 3, 32, 32, device=device), torch.randint(0, 10, (batch,), device=device)
    for step in range(steps + 2):  # two warm-up steps
        if step == 2:
            start = time.perf_counter()
        with torch.autocast(device.type, torch.bfloat16, enabled=precision == "bf16"):
            loss = F.cross_entropy(module(_memory_format(x, precision)).float(), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return batch * steps / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--precision", default="auto")
    p.add_argument("--device", default="auto")
    p.add_argument("--only", default=",".join(ORDER))
    args = p.parse_args()
    device = resolve_device(args.device)
    precision = resolve_precision(args.precision, device)
    print(f"device {device}, {torch.get_num_threads()} threads, precision {precision}, batch {args.batch_size}")
    members = family()
    for name in args.only.split(","):
        model_args = members[name][0]
        cfg = TrainConfig(model=model_args[1], msa=model_args[3] if len(model_args) > 2 else None)
        torch.manual_seed(0)
        module = get_spec(cfg.model).build(**cfg.build_options(10))
        rate = images_per_s(module, precision, device, args.batch_size, args.steps)
        print(f"{name:6} {cfg.model:14} {rate:6.1f} images/s", flush=True)


if __name__ == "__main__":
    main()
