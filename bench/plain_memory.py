"""The plain analysis's memory (not a test): each model's estimate, traced on fake tensors before anything runs,
against the peak it really takes in a fresh process, and whether the server's budget admits it.

    .venv/bin/python bench/plain_memory.py [--model NAME ...] [--budget-mb 1500] [--estimate-only]

For each model (random weights, the bundled cat photo): its weights, the estimate
(`engine.analyses.budget.plain_bytes`), and unless --estimate-only the measured peak of `Service.analyze` beyond
the loaded weights (Linux's VmHWM, reset just before; none for a model the budget refuses), and the verdict at the
budget: admitted or refused before it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ["vit_tiny_patch16_224", "resnet50", "eva02_large_patch14_448", "beit_large_patch16_512"]
MODELS += ["maxvit_large_tf_512"]  # the three largest, and two everyday ones
MEASURE = """
import json, re, sys
from app.backend.service import Service
from engine.analyses.budget import footprint, plain_bytes
service, name, run = Service(), sys.argv[1], sys.argv[3] == "run"
loaded = service.load(name, service.weights_for(name, "random"))
need = footprint(loaded, timed=False)
out = {"weights": need.weight_bytes, "estimate": plain_bytes(loaded, need)}
def status(key):
    return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1)) * 1024
if run:
    start = status("VmRSS")
    open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here
    try:
        service.analyze(sys.argv[2], [name], "random")
        out["measured"] = status("VmHWM") - start
    except ValueError as exc:  # refused by the budget: nothing ran
        out["refused"] = str(exc)
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help=f"a timm or bundled model (default: {', '.join(MODELS)})")
    parser.add_argument("--budget-mb", type=float, default=1500, help="VIT_EXPLORER_REQUEST_MB to judge by")
    parser.add_argument("--estimate-only", action="store_true", help="trace only: no analysis is run")
    args = parser.parse_args()
    photo = ROOT / "assets" / "samples" / "cat.jpg"
    print(f"{'model':<28} {'weights':>9} {'estimate':>9} {'measured':>9}  at {args.budget_mb:,.0f} MB")
    for name in args.model or MODELS:
        mode = "trace" if args.estimate_only else "run"
        done = subprocess.run(
            [sys.executable, "-c", MEASURE, name, str(photo), mode],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "VIT_EXPLORER_REQUEST_MB": str(args.budget_mb)},
        )
        if done.returncode:
            print(f"{name:<28} failed: {done.stderr.strip().splitlines()[-1]}")
            continue
        found = json.loads(done.stdout.strip().splitlines()[-1])
        measured = f"{found['measured'] / 2**20:,.0f} MB" if "measured" in found else "-"
        verdict = "refused before it runs" if found["estimate"] > args.budget_mb * 2**20 else "admitted"
        print(
            f"{name:<28} {found['weights'] / 2**20:>6,.0f} MB {found['estimate'] / 2**20:>6,.0f} MB {measured:>9}  "
            f"{verdict}",
            flush=True,
        )


if __name__ == "__main__":
    main()
