"""Score every bundled checkpoint that has no per-image correctness yet on the 10,000 CIFAR-10 test images and
store a bit per image beside it (`assets/checkpoints/X.correct.npz`, engine.models.correctness), for the paired
comparisons of engine.paper.paired. The trainer does this itself for new checkpoints; this script covers the ones
bundled before it did.

    python scripts/score_test_split.py [--data .data/cifar10-jpeg] [--force]
    python scripts/score_test_split.py --corruption [--jobs 2]  # Fig 12b's corrupted images, into paper_figures.json

Runs the stored (fp16) weights in fp32 on the CPU and prints each checkpoint's accuracy beside its sidecar's
`test_accuracy` (the trainer's own evaluation). `--corruption` stores, per member of the stored Fig 12b, a bit
per corrupted image (base64 under the member's `correct`), after checking that they give its stored accuracy at
every corruption and severity (engine.paper.findings.corruption_disagreements).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import hashlib  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from engine.data.training_data import CIFAR10_CLASSES, load_image_folder  # noqa: E402
from engine.models import correctness  # noqa: E402
from engine.models.checkpoint import read_meta  # noqa: E402
from engine.models.cifar_family import CHECKPOINTS  # noqa: E402

STATE = Path(os.environ.get("VIT_EXPLORER_STATE", Path.home() / ".cache" / "vit-explorer"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO / ".data" / "cifar10-jpeg"), help="ImageFolder with test/")
    parser.add_argument("--force", action="store_true", help="re-score checkpoints that already have their bits")
    parser.add_argument("stems", nargs="*", help="only these checkpoints (file stems), e.g. preact_resnet")
    parser.add_argument("--corruption", action="store_true", help="Fig 12b's per-image bits, not the test split's")
    parser.add_argument("--threads", type=int, help="torch CPU threads (1 runs best beside other busy processes)")
    parser.add_argument("--jobs", type=int, default=1, help="with --corruption: processes, a corruption each")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.corruption:
        return score_corruption(args.jobs)
    todo = [
        path
        for path in sorted(CHECKPOINTS.glob("*.safetensors"))
        if (args.force or not correctness.path_for(path).is_file()) and (not args.stems or path.stem in args.stems)
    ]
    if not todo:
        print("every bundled checkpoint has its per-image correctness")
        return 0
    from engine.training.train import score_checkpoint

    test, _ = load_image_folder(Path(args.data) / "test", None, 0, CIFAR10_CLASSES)
    device = torch.device("cpu")
    for path in todo:
        if not args.force and correctness.path_for(path).is_file():
            continue  # scored meanwhile by another run of this script
        scored = score_checkpoint(path, test, device)
        stated = read_meta(path).test_accuracy
        gap = "" if stated is None else f", sidecar {stated:.2%} ({100 * (scored.accuracy - stated):+.2f} points)"
        print(f"{path.stem}: {scored.accuracy:.2%} on {len(scored.correct)} images{gap}", flush=True)
    return 0


def corruption_part(part: tuple[list[str], str, list[int], int, Path]) -> tuple[str, dict[str, np.ndarray]]:
    """Fig 12b's bits of members `keys` under one corruption at every severity, in a worker with one thread, kept
    in `kept` (a file per corruption) so that an interrupted run goes on where it stopped."""
    from engine.paper.findings import corruption_correct, load_member

    keys, name, severities, images, kept = part
    done = kept / f"{name}.npz"
    if done.is_file():
        with np.load(done) as stored:
            return name, {key: stored[key] for key in keys}
    torch.set_num_threads(1)
    section = {"images": images, "models": {"": {"result": {"corruptions": [name], "severities": severities}}}}
    bits = corruption_correct({key: load_member(key, device="cpu") for key in keys}, section)
    np.savez(kept / f"{name}.tmp.npz", **bits)
    (kept / f"{name}.tmp.npz").replace(done)
    return name, bits


def score_corruption(jobs: int) -> int:
    """Per-image bits on Fig 12b's corrupted images for every trained member of the stored section (`jobs`
    corruptions at once, a process each; each corruption's bits kept under $VIT_EXPLORER_STATE until stored),
    stored only when every member's bits reproduce its stored accuracy at each corruption and severity."""
    from engine.paper.findings import STORE, corruption_disagreements, outdated, pack_bits

    section = json.loads(STORE.read_text())["findings"]["corruption"]
    if changed := outdated(section):
        print(f"Fig 12b was measured on older weights of {', '.join(changed)}: measure it again first")
        return 1
    keys = [key for key, run in section["models"].items() if not run["random_weights"]]
    first = next(iter(section["models"].values()))["result"]
    weights = json.dumps([section["images"], first["severities"], [section["models"][k]["weights"] for k in keys]])
    kept = STATE / "fig12b-bits" / hashlib.sha256(weights.encode()).hexdigest()[:12]
    kept.mkdir(parents=True, exist_ok=True)
    parts = [(keys, name, first["severities"], section["images"], kept) for name in first["corruptions"]]
    start, done, found = time.perf_counter(), 0, {}
    with multiprocessing.get_context("fork").Pool(jobs) as pool:  # a process per corruption at a time
        for name, part in pool.imap_unordered(corruption_part, parts):
            found[name], done = part, done + 1
            print(f"{name}: {done}/{len(parts)} corruptions, {time.perf_counter() - start:.0f} s", flush=True)
    bits = {key: np.concatenate([found[name][key] for name in first["corruptions"]]) for key in keys}
    failed = False
    for key, correct in bits.items():
        run = section["models"][key]
        stated = run["result"]["mean_accuracy"]
        print(f"{key}: {correct.mean():.4%} on {len(correct)} corrupted images, stored mean {stated:.4%}", flush=True)
        for line in corruption_disagreements(run, correct):
            print(f"{key}: the bits disagree with the stored figure: {line}")
            failed = True
    if failed:
        return 1
    store = json.loads(STORE.read_text())  # read again: other sections may have changed meanwhile
    for key, correct in bits.items():
        store["findings"]["corruption"]["models"][key]["correct"] = pack_bits(correct)
    STORE.write_text(json.dumps(store, indent=1))
    print(f"{len(bits)} members' bits written to {STORE.relative_to(REPO)} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
