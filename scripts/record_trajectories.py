"""Fig 1b for the app: each figure member's training trajectory (r_t, θ_t), stored in assets/paper_figures.json.

    python scripts/record_trajectories.py [--only step0,step6,vit]

Each bundled checkpoint trained by scripts/train_family.py records its trajectory in its sidecar
(`--trajectory-points 20`); this copies it, with the checkpoint's summary, into the store the app reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from train_family import family  # noqa: E402

from engine.models.checkpoint import read_meta  # noqa: E402
from engine.models.cifar_family import CHECKPOINTS  # noqa: E402
from engine.models.member_accuracy import trained_summary  # noqa: E402
from engine.paper.findings import FIGURE_MEMBERS, STORE, member_label  # noqa: E402

POINTS = 20


def record(key: str) -> dict:
    """The stored entry of member `key`, from the trajectory its bundled checkpoint's training recorded."""
    _, stem = family()[key]
    bundled = read_meta(CHECKPOINTS / f"{stem}.json")
    if bundled.trajectory:
        return {
            "label": member_label(key),
            "model": bundled.architecture,
            "weights": trained_summary(CHECKPOINTS / f"{stem}.json"),
            "checkpoint": bundled.identity(),
            "random_weights": False,
            "command": "recorded by the bundled checkpoint's own training",
            "result": bundled.trajectory,
        }
    raise SystemExit(
        f"{key}: the bundled checkpoint {stem} has no trajectory; "
        f"train it with `python scripts/train_family.py --only {key}`, whose recipe records one"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(FIGURE_MEMBERS))
    args = p.parse_args()
    for key in args.only.split(","):
        entry = record(key)
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
