"""Fig 1b for the app: each figure member's training trajectory (r_t, θ_t), stored in assets/paper_figures.json.

    python scripts/record_trajectories.py [--only step0,step6,vit] [--data .data/cifar10-jpeg]   # 1 hour on 2 cores

A bundled checkpoint whose sidecar holds a trajectory gives it directly. The checkpoints trained before
the trainer's recorder existed are trained again with their own command (scripts/train_family.py's
recipe, fp32 as they were trained) plus `--trajectory-points 20`, into .data/trajectories/: the same recipe and
seed, but on another CPU's kernels the weights come out slightly different, so each entry records its
command and the re-run's test accuracy next to the bundled one's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from train_family import family, recipe_args  # noqa: E402

from app.paper_findings import STORE  # noqa: E402
from engine.checkpoint import read_meta  # noqa: E402
from engine.findings import FIGURE_MEMBERS, member_label  # noqa: E402
from engine.models import CHECKPOINTS  # noqa: E402

POINTS = 20


def record(key: str, data: str) -> dict:
    """The stored entry of member `key`: from its bundled sidecar, or from a re-run of its command."""
    model_args, stem = family()[key]
    bundled = read_meta(CHECKPOINTS / f"{stem}.json")
    if bundled.trajectory:
        return {
            "label": member_label(key),
            "model": bundled.architecture,
            "weights": bundled.summary(),
            "random_weights": False,
            "command": "recorded by the bundled checkpoint's own training",
            "result": bundled.trajectory,
        }
    out = REPO / ".data" / "trajectories" / stem
    command = [
        "-m",
        "engine.train",
        *model_args,
        "--data",
        data,
        *recipe_args(key),  # the family's recipe records the trajectory (--trajectory-points)
        "--out",
        str(out.relative_to(REPO)),
    ]
    print(f"{key}: python {' '.join(command)}", flush=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, *command], cwd=REPO, check=True)
    rerun = read_meta(out)
    return {
        "label": member_label(key),
        "model": rerun.architecture,
        "weights": f"a re-run of the bundled checkpoint's command: {rerun.summary()} "
        f"(the bundled one: {100 * bundled.test_accuracy:.1f}%)",
        "random_weights": False,
        "command": "python " + " ".join(command[:-2]),
        "seconds": round(time.perf_counter() - start, 1),
        "result": rerun.trajectory,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=".data/cifar10-jpeg")
    p.add_argument("--only", default=",".join(FIGURE_MEMBERS))
    args = p.parse_args()
    for key in args.only.split(","):
        entry = record(key, args.data)
        store = json.loads(STORE.read_text()) if STORE.is_file() else {"findings": {}}  # read late: others write it
        section = store["findings"].setdefault(
            "trajectory",
            {
                "figure": "Fig 1b",
                "title": "training trajectory",
                "split": "train",
                "images": 50000,
                "options": {"points": POINTS},
                "models": {},
            },
        )
        section["models"][key] = entry
        STORE.write_text(json.dumps(store, indent=1))
        print(f"{key}: {len(entry['result']['r'])} points stored in {STORE.relative_to(REPO)}", flush=True)


if __name__ == "__main__":
    main()
