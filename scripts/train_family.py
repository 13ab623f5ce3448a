"""Train the bundled CIFAR-10 family one member at a time, across sessions: AlterNet build-up steps 0..6
(Fig 12a; step 0 is the PreAct ResNet, step 6 the paper's placement) with one recipe, and the CIFAR ViT
with its own, all for the same number of epochs.

    python scripts/train_family.py [--data .data/cifar10-jpeg] [--only step6,vit] [--epochs 40] [--seeds 0]
                                   [--commit] [--dry-run] [--no-bundle] [--archive FILE]

With no member named it says where the family stands (finished, resumable, to do) and trains what is
left, in the order step 6, step 0, ViT, then steps 3, 1, 5, 2, 4. Each run keeps its resumable state
(fp32 weights, optimizer, EMA, position in the epoch, random states, Fig 1b's snapshots) outside the work
tree, under $VIT_EXPLORER_STATE (default ~/.cache/vit-explorer/family/<recipe>/), saved every epoch and
every 5 minutes, and resumes from it when it is there. A finished member's checkpoint (fp16 weights and
sidecar) is copied into assets/checkpoints/ and, with `--commit`, committed at once. `--dry-run` prints the
command that reproduces each checkpoint. `--seeds 1,2` trains further runs of the same recipe with other seeds,
bundled beside seed 0's as `<stem>-seed<N>` (the app's maps keep seed 0). The data folder is unpacked from
../shared/data/cifar10-jpeg.tar.gz (or `--archive`) when it is missing and that file is there. `--no-bundle`
trains and leaves each finished run in the state folder: on a lent GPU machine (`scripts/device_seeds.sh`),
whose runs a later call of this script here bundles.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engine.models.cifar_family import CHECKPOINTS, checkpoint_stem  # noqa: E402
from engine.models.member_accuracy import trained_summary  # noqa: E402
from engine.models.placement import PAPER_DEPTHS, buildup_sequence  # noqa: E402

EPOCHS = 40  # the default; `--epochs N` trains (and names) the recipes for N epochs (the first family: 15)
ORDER = ("step6", "step0", "vit", "step3", "step1", "step5", "step2", "step4")
SHARED_DATA = REPO.parent / "shared" / "data" / "cifar10-jpeg.tar.gz"


def seeded(stem: str, seed: int) -> str:
    """The checkpoint stem of seed `seed`'s run: seed 0 keeps the plain stem."""
    return stem if seed == 0 else f"{stem}-seed{seed}"


def family() -> dict[str, tuple[list[str], str]]:
    """name -> (model arguments, seed 0's checkpoint stem)."""
    members = {}
    for step, placement in enumerate(buildup_sequence(PAPER_DEPTHS)):
        if step == 0:
            members["step0"] = (["--model", "preact_resnet"], checkpoint_stem("preact_resnet", {}))
        else:
            stem = checkpoint_stem("alternet", {"msa": placement})
            members[f"step{step}"] = (["--model", "alternet", "--msa", str(placement)], stem)
    members["vit"] = (["--model", "vit_cifar"], checkpoint_stem("vit_cifar", {}))
    return members


def recipe_of(name: str, epochs: int = EPOCHS) -> str:
    """The recipe's name: one for the CNN and every AlterNet, one for the ViT, each for `epochs` epochs."""
    return f"{'vit' if name == 'vit' else 'cnn'}-adamw-{epochs}"


def recipe_args(name: str, epochs: int = EPOCHS, seed: int = 0) -> list[str]:
    """The trainer's arguments for member `name`'s recipe: AdamW at 2e-3 with channels_last for the CNNs,
    at 1e-3 for the ViT; the rest shared."""
    own = ["--lr", "1e-3"] if name == "vit" else ["--lr", "2e-3", "--channels-last"]
    return [
        *("--recipe", recipe_of(name, epochs), "--optimizer", "adamw", *own),
        *("--epochs", str(epochs), "--batch-size", "128", "--weight-decay", "0.05", "--warmup-epochs", "1"),
        *("--smoothing", "0.1", "--mixup", "0", "--cutmix", "0", "--drop-path", "0", "--ema", "0.999"),
        *("--seed", str(seed), "--half", "--precision", "auto", "--trajectory-points", "20"),
        "--compile",  # inductor's CPU backend: 1.1-1.2x the eager bf16 step (bench/train_speed.py)
        *("--save-minutes", "5"),
    ]


def state_root(recipe: str) -> Path:
    """Where runs of `recipe` keep their checkpoints and training state: outside the work tree."""
    base = Path(os.environ.get("VIT_EXPLORER_STATE", Path.home() / ".cache" / "vit-explorer" / "family"))
    return base / recipe


def is_finished(sidecar: Path, recipe: str, epochs: int) -> bool:
    """Whether `sidecar` describes a finished run of `recipe` (all `epochs`, evaluated)."""
    if not sidecar.is_file():
        return False
    meta = json.loads(sidecar.read_text())
    return (
        meta.get("recipe", {}).get("name") == recipe
        and meta.get("epochs") == epochs
        and meta.get("subset_accuracy") is not None
    )


def standing(name: str, stem: str, epochs: int) -> str:
    """'finished', 'trained, not yet bundled', 'resumable at epoch X' or 'to do'; the last two say what
    is bundled meanwhile."""
    recipe = recipe_of(name, epochs)
    bundled = CHECKPOINTS / f"{stem}.json"
    if is_finished(bundled, recipe, epochs):
        return "finished"
    run = state_root(recipe) / stem
    if is_finished(run.with_suffix(".json"), recipe, epochs):
        return "trained, not yet bundled"
    status = "to do"
    if run.with_suffix(".state.pt").is_file() and run.with_suffix(".json").is_file():
        status = f"resumable at epoch {json.loads(run.with_suffix('.json').read_text()).get('epochs', 0):g}"
    if bundled.is_file():
        status += f" (bundled meanwhile: {trained_summary(bundled).removeprefix('trained here: ')})"
    return status


def command_for(name: str, data: str, epochs: int, out: Path | None = None, seed: int = 0) -> list[str]:
    model_args, _ = family()[name]
    where = ["--out", str(out)] if out is not None else []
    recipe = recipe_args(name, epochs, seed)
    return [sys.executable, "-m", "engine.training.train", *model_args, "--data", data, *recipe, *where]


def bundle(stem: str, recipe: str, commit: bool) -> None:
    """Copy a finished run's checkpoint into assets/checkpoints/ and rewrite the documents' generated tables (the
    claims and the family's, which count every bundled seed); with `commit`, commit just those files (the whole of
    README.md and docs/training.md: commit other edits to them first)."""
    run = state_root(recipe) / stem
    files = []
    for suffix in (".safetensors", ".json", ".correct.npz"):
        shutil.copyfile(run.with_suffix(suffix), CHECKPOINTS / f"{stem}{suffix}")
        files.append(f"assets/checkpoints/{stem}{suffix}")
    subprocess.run([sys.executable, str(REPO / "scripts" / "claims_table.py"), "--write"], cwd=REPO, check=True)
    files += ["README.md", "docs/training.md"]
    if not commit:
        return
    meta = json.loads(run.with_suffix(".json").read_text())
    message = (
        f"Bundled checkpoint {stem}: {recipe}, {meta['epochs']:g} epochs, "
        f"{100 * meta['test_accuracy']:.1f}% CIFAR-10 test accuracy"
    )
    for _ in range(30):  # the index may be locked by a commit made by hand
        if (
            subprocess.run(["git", "add", "-f", *files], cwd=REPO).returncode == 0
            and subprocess.run(["git", "commit", "-q", "-m", message, "--", *files], cwd=REPO).returncode == 0
        ):
            return
        time.sleep(10)
    print(f"could not commit {files}; commit them by hand", flush=True)


def ensure_data(data: str, archive_path: Path = SHARED_DATA) -> None:
    folder = REPO / data if not Path(data).is_absolute() else Path(data)
    if (folder / "train").is_dir() or not archive_path.is_file():
        return
    print(f"unpacking {archive_path} into {folder}", flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive_path) as archive:
        archive.extractall(folder.parent / ".unpack", filter="data")
    unpacked = next(p.parent for p in (folder.parent / ".unpack").rglob("train") if p.is_dir())
    for split in ("train", "test"):
        shutil.move(str(unpacked / split), folder / split)
    shutil.rmtree(folder.parent / ".unpack")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=".data/cifar10-jpeg")
    p.add_argument("--only", default=",".join(ORDER), help="comma-separated members, in order")
    p.add_argument("--epochs", type=int, default=EPOCHS, help="every member's training length")
    p.add_argument("--seeds", default="0", help="comma-separated training seeds, each a run of its own")
    p.add_argument("--commit", action="store_true", help="commit each finished checkpoint at once")
    p.add_argument("--dry-run", action="store_true", help="print the command that reproduces each checkpoint")
    p.add_argument("--no-bundle", action="store_true", help="train only: leave finished runs in the state folder")
    p.add_argument("--archive", type=Path, default=SHARED_DATA, help="the data's .tar.gz, unpacked when missing")
    args = p.parse_args()
    runs = [(name, seed) for seed in map(int, args.seeds.split(",")) for name in args.only.split(",")]
    if args.dry_run:
        for name, seed in runs:
            print(f"{name}: python {' '.join(command_for(name, args.data, args.epochs, seed=seed)[1:])}")
        return
    for name, seed in runs:
        stem = seeded(family()[name][1], seed)
        print(f"{name:6} {stem}: {standing(name, stem, args.epochs)}", flush=True)
    ensure_data(args.data, args.archive)
    for name, seed in runs:
        stem, recipe = seeded(family()[name][1], seed), recipe_of(name, args.epochs)
        status = standing(name, stem, args.epochs)
        if status == "finished":
            continue
        run = state_root(recipe) / stem
        if status != "trained, not yet bundled":
            command = command_for(name, args.data, args.epochs, run, seed)
            if status.startswith("resumable"):
                command += ["--resume", str(run)]
            print(f"{name}: {' '.join(['python', *command[1:]])}", flush=True)
            start = time.time()
            subprocess.run(command, cwd=REPO, check=True)
            print(f"{name}: done in {(time.time() - start) / 60:.1f} min", flush=True)
        if not args.no_bundle:
            bundle(stem, recipe, args.commit)


if __name__ == "__main__":
    main()
