"""Train the bundled CIFAR-10 family one model after another: AlterNet build-up steps 0..6 (Fig 12a;
step 0 is the PreAct ResNet, step 6 the paper's placement) and the CIFAR ViT, all with one recipe and
the same number of epochs, into assets/checkpoints/. A model whose checkpoint already holds a finished
run of this recipe is skipped, so running the script again goes on where it stopped (an interrupted run resumes from its
training state).

    python scripts/train_family.py --data .data/cifar10-jpeg [--only step6,vit] [--commit] [--dry-run]

`--dry-run` prints the one command that reproduces each checkpoint. `--commit` commits each
checkpoint and its sidecar as soon as it is written.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engine.models import CHECKPOINTS, checkpoint_stem  # noqa: E402
from engine.placement import PAPER_DEPTHS, buildup_sequence  # noqa: E402

EPOCHS = 2
RECIPE = ["--epochs", str(EPOCHS), "--batch-size", "128", "--lr", "1e-3", "--warmup-epochs", "0.2", "--mixup", "0",
          "--cutmix", "0", "--drop-path", "0", "--seed", "0", "--half",
          "--precision", "fp32"]  # as the bundled checkpoints were trained (that CPU had no bf16 units)
ORDER = ("step6", "step0", "vit", "step2", "step4", "step1", "step3", "step5")  # issue: 0, 2, 4, 6 first


def family() -> dict[str, tuple[list[str], str]]:
    """name -> (model arguments, checkpoint stem)."""
    members = {}
    for step, placement in enumerate(buildup_sequence(PAPER_DEPTHS)):
        if step == 0:
            members["step0"] = (["--model", "preact_resnet"], checkpoint_stem("preact_resnet", {}))
        else:
            stem = checkpoint_stem("alternet", {"msa": placement})
            members[f"step{step}"] = (["--model", "alternet", "--msa", str(placement)], stem)
    members["vit"] = (["--model", "vit_cifar"], checkpoint_stem("vit_cifar", {}))
    return members


def finished(stem: str) -> bool:
    sidecar = CHECKPOINTS / f"{stem}.json"
    if not sidecar.is_file():
        return False
    meta = json.loads(sidecar.read_text())
    return meta.get("epochs") == EPOCHS and meta.get("subset_accuracy") is not None


def partial(stem: str) -> Path | None:
    """The checkpoint of an interrupted run of this recipe (weights, sidecar and training state), if any."""
    weights = CHECKPOINTS / f"{stem}.safetensors"
    sidecar, state = CHECKPOINTS / f"{stem}.json", CHECKPOINTS / f"{stem}.state.pt"
    if not (weights.is_file() and sidecar.is_file() and state.is_file()):
        return None
    return weights if json.loads(sidecar.read_text()).get("epochs", 0) < EPOCHS else None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=".data/cifar10-jpeg")
    p.add_argument("--only", default=",".join(ORDER), help="comma-separated members, in order")
    p.add_argument("--commit", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args()
    members = family()
    for name in args.only.split(","):
        model_args, stem = members[name]
        command = [sys.executable, "-m", "engine.train", *model_args, "--data", args.data, *RECIPE]
        shown = " ".join(["python", *command[1:]])
        if args.dry_run:
            print(f"{name}: {shown}")
            continue
        if finished(stem):
            print(f"{name}: {stem} is trained already", flush=True)
            continue
        interrupted = partial(stem)
        if interrupted is not None:
            command += ["--resume", str(interrupted.relative_to(REPO))]
        print(f"{name}: {' '.join(['python', *command[1:]])}", flush=True)
        start = time.time()
        subprocess.run(command, cwd=REPO, check=True)
        print(f"{name}: done in {(time.time() - start) / 60:.1f} min", flush=True)
        if args.commit:
            files = [f"assets/checkpoints/{stem}.safetensors", f"assets/checkpoints/{stem}.json"]
            for attempt in range(30):  # the index may be locked by a commit made by hand
                add = subprocess.run(["git", "add", "-f", *files], cwd=REPO)
                done = add.returncode == 0 and subprocess.run(
                    ["git", "commit", "-q", "-m", f"Bundled checkpoint {stem} ({EPOCHS} epochs on this CPU)", "--", *files], cwd=REPO
                ).returncode == 0
                if done:
                    break
                time.sleep(10)


if __name__ == "__main__":
    main()
