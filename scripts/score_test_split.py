"""Score every bundled checkpoint that has no per-image correctness yet on the 10,000 CIFAR-10 test images and
store a bit per image beside it (`assets/checkpoints/X.correct.npz`, engine.correctness), for the paired
comparisons of engine.paired. The trainer does this itself for new checkpoints; this script covers the ones
bundled before it did.

    python scripts/score_test_split.py [--data .data/cifar10-jpeg] [--force]
    python scripts/score_test_split.py --corruption      # Fig 12b's corrupted images, into paper_figures.json

Runs the stored (fp16) weights in fp32 on the CPU and prints each checkpoint's accuracy beside its sidecar's
`test_accuracy` (the trainer's own evaluation). `--corruption` stores, per member of the stored Fig 12b, a bit
per corrupted image (base64 under the member's `correct`), after checking that they give its stored mean.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import json  # noqa: E402

import torch  # noqa: E402

from engine import correctness  # noqa: E402
from engine.checkpoint import read_meta  # noqa: E402
from engine.models import CHECKPOINTS  # noqa: E402
from engine.training_data import CIFAR10_CLASSES, load_image_folder  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO / ".data" / "cifar10-jpeg"), help="ImageFolder with test/")
    parser.add_argument("--force", action="store_true", help="re-score checkpoints that already have their bits")
    parser.add_argument("stems", nargs="*", help="only these checkpoints (file stems), e.g. preact_resnet")
    parser.add_argument("--corruption", action="store_true", help="Fig 12b's per-image bits, not the test split's")
    parser.add_argument("--threads", type=int, help="torch CPU threads (1 runs best beside other busy processes)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.corruption:
        return score_corruption()
    todo = [
        path
        for path in sorted(CHECKPOINTS.glob("*.safetensors"))
        if (args.force or not correctness.path_for(path).is_file()) and (not args.stems or path.stem in args.stems)
    ]
    if not todo:
        print("every bundled checkpoint has its per-image correctness")
        return 0
    from engine.train import score_checkpoint

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


def score_corruption() -> int:
    """Per-image bits on Fig 12b's corrupted images for every trained member of the stored section."""
    from engine.findings import STORE, corruption_correct, load_member, pack_bits

    store = json.loads(STORE.read_text())
    section = store["findings"]["corruption"]
    keys = [key for key, run in section["models"].items() if not run["random_weights"]]
    bits = corruption_correct({key: load_member(key) for key in keys}, section)
    for key, correct in bits.items():
        run = section["models"][key]
        stated = run["result"]["mean_accuracy"]
        print(f"{key}: {correct.mean():.2%} on {len(correct)} corrupted images, stored mean {stated:.2%}", flush=True)
        if abs(correct.mean() - stated) > 0.005:
            print(f"{key}: the bits disagree with the stored mean: the section was measured on other weights")
            return 1
        run["correct"] = pack_bits(correct)
    STORE.write_text(json.dumps(store, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
