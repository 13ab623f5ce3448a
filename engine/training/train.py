"""Train a CIFAR model of engine.models: the paper's DeiT-style recipe (Appendix A), scaled down.

    python -m engine.training.train --model alternet --msa s3:6,s4:2,s4:4 --data DIR --epochs 30 --out PATH

AdamW (or Nesterov SGD, `--optimizer sgd`), linear warmup then cosine decay to zero, label smoothing,
mixup/CutMix, random crop (pad 4) and flip, stochastic depth, and an exponential moving average of the
weights (`--ema DECAY`; the EMA weights are what is saved). `--recipe NAME` names the recipe in the
sidecar. The dataset (an ImageFolder with train/ and test/, or `cifar10` for torchvision's download)
is decoded once into a uint8 tensor on the device; batches are augmented there. bf16 autocast and
channels_last on CUDA and on CPUs with bf16 units (AVX512-BF16 or AMX),
fp32 elsewhere (`--precision`). `--budget MINUTES` fits warmup and cosine decay to wall-clock time
(schedule progress = training time / budget) instead of `--epochs`. Every epoch, and every
`--save-minutes` within one, writes the checkpoint (engine.models.checkpoint) and `PATH.state.pt` (fp32 weights,
optimizer, EMA, position in the epoch, random states) so `--resume PATH` continues a run that stopped,
even mid-epoch (`--stop-after N` epochs or `--stop-after-steps N` end one early, for time-limited
sessions). The end of every run evaluates on test/ (accuracy and NLL, and accuracy with flip test-time
augmentation) and on the bundled 1,000-image subset, and records them with images/s, device, precision,
epochs and minutes in the sidecar. Randomness is seeded per epoch and its state saved, so a resumed run
repeats an uninterrupted one.

Fig 1b's weight trajectory: `--trajectory-points N` snapshots of the trainable parameters at N evenly
spaced moments of the schedule (share k/N done, k = 0..N-1: initialization first), kept in `PATH.trajectory/`
beside the state file while the run lasts, and at the end the sidecar's "trajectory" holds their polar
coordinates around the final weights (`polar_trajectory`). A run ended by --stop-after keeps the folder for
--resume; one that fails deletes it, and a resume that finds its snapshots gone records from the resume point.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from ..data.training_data import Normalize, Split, crop_flip, load_data, subset_split
from ..errors import CheckpointError, EngineError
from ..models import checkpoint as ckpt
from ..models import correctness
from ..models.cifar_family import (
    CHECKPOINTS,
    CIFAR10_CLASSES,
    DEFAULT_WIDTH,
    checkpoint_stem,
    resolve_placement,
)
from ..models.placement import PAPER_DEPTHS
from ..models.registry import get_spec, resolve_device
from .trajectory import TrajectoryRecorder


@dataclass
class TrainConfig:
    model: str = "alternet"
    data: str = "cifar10"
    out: str | None = None
    msa: str | None = None
    depths: tuple[int, ...] | None = None
    width: int | None = None
    epochs: int = 30
    budget: float | None = None  # minutes of training; replaces `epochs` as the schedule's length
    precision: str = "auto"  # auto, bf16 or fp32
    channels_last: bool | None = None  # the model and its inputs in channels_last; None: with bf16
    recipe_name: str = ""  # names the recipe in the sidecar
    optimizer: str = "adamw"  # adamw, or sgd (Nesterov, momentum 0.9)
    ema: float = 0.0  # decay of the weights' moving average (with warmup); 0: none
    batch_size: int = 256
    lr: float = 1e-3
    weight_decay: float = 0.05
    warmup_epochs: float = 1.0
    smoothing: float = 0.1
    mixup: float = 0.8
    cutmix: float = 1.0
    drop_path: float = 0.1
    seed: int = 0
    device: str = "auto"
    resume: str | None = None
    limit_train: int | None = None
    limit_test: int | None = None
    eval_batch_size: int = 1000
    save_every: int = 1
    save_minutes: float = 5.0  # training state also saved this often within an epoch
    stop_after: int | None = None
    stop_after_steps: int | None = None
    compile: bool = False
    half: bool = False
    progress: bool = True
    trajectory_points: int = 20  # Fig 1b weight snapshots over the run; 0: none

    def build_options(self, num_classes: int) -> dict:
        """The full architecture options for the registry's build, as stored in the sidecar."""
        options: dict = {} if num_classes == 10 else {"num_classes": num_classes}
        if self.msa is not None and self.model != "alternet":
            raise EngineError(f"--msa applies to alternet only, not {self.model}")
        if self.model in ("alternet", "preact_resnet"):
            depths = tuple(self.depths or PAPER_DEPTHS)
            if self.model == "alternet":
                options["msa"] = str(resolve_placement(self.msa, depths))
            options |= {"depths": list(depths), "width": self.width or DEFAULT_WIDTH}
        elif self.depths is not None or self.width is not None:
            raise EngineError(f"--depths and --width apply to alternet and preact_resnet, not {self.model}")
        return options

    def recipe(self) -> dict:
        keys = (
            "epochs",
            "budget",
            "batch_size",
            "lr",
            "weight_decay",
            "warmup_epochs",
            "smoothing",
            "mixup",
            "cutmix",
            "drop_path",
            "ema",
            "seed",
        )
        optimizer = {"adamw": "AdamW", "sgd": "SGD, Nesterov, momentum 0.9"}[self.optimizer]
        named = {"name": self.recipe_name} if self.recipe_name else {}
        return (
            named
            | {"optimizer": optimizer, "schedule": "linear warmup, cosine to 0", "augment": "random crop (pad 4), flip"}
            | {k: getattr(self, k) for k in keys}
        )


@dataclass
class Evaluation:
    accuracy: float
    nll: float
    count: int
    flip_accuracy: float | None = None  # with flip test-time augmentation (mean of both softmaxes)
    correct: torch.Tensor | None = None  # bool per image, in the split's order (no flip)


@dataclass
class TrainResult:
    model: nn.Module
    checkpoint: Path
    evaluation: Evaluation
    epoch_losses: list[float] = field(default_factory=list)
    images_per_s: float = 0.0


def lr_at(step: int, total: int, warmup: int, base: float, progress: float | None = None) -> float:
    """Linear warmup over `warmup` steps, then cosine decay to zero at `total` steps, or, given
    `progress` (training time / budget), at progress 1."""
    if step < warmup:
        return base * (step + 1) / warmup
    if progress is None:
        progress = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def cpu_has_bf16() -> bool:
    """Whether this CPU computes bf16 in hardware (AVX512-BF16 or AMX), where autocast pays."""
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def resolve_precision(precision: str, device: torch.device) -> str:
    """'bf16' or 'fp32' for `precision` ('auto': bf16 on CUDA and on CPUs with bf16 units)."""
    if precision == "auto":
        return "bf16" if device.type == "cuda" or cpu_has_bf16() else "fp32"
    if precision not in ("bf16", "fp32"):
        raise EngineError(f"precision must be auto, bf16 or fp32, not {precision!r}")
    return precision


def param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """No weight decay on norms, biases and the relative position tables (1-D or bias-like tensors)."""
    decay, plain = [], []
    for name, param in model.named_parameters():
        (plain if param.ndim <= 1 or name.endswith("relative_position_bias_table") else decay).append(param)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": plain, "weight_decay": 0.0}]


@torch.no_grad()
def evaluate(
    model: nn.Module,
    split: Split,
    device: torch.device,
    batch_size: int = 1000,
    precision: str = "fp32",
    flip: bool = False,
) -> Evaluation:
    """Top-1 accuracy and mean NLL (cross-entropy of the softmax) over `split`; with `flip`, also the
    accuracy of the mean softmax of each image and its mirror image."""
    model.eval()
    normalize = Normalize(device)
    nll, flip_correct, hits = 0.0, 0, []
    for start in range(0, len(split.labels), batch_size):
        x = normalize(split.images[start : start + batch_size].to(device))
        y = split.labels[start : start + batch_size].to(device)
        with torch.autocast(device.type, torch.bfloat16, enabled=precision == "bf16"):
            logits = model(_memory_format(x, precision)).float()
            if flip:
                mirrored = model(_memory_format(x.flip(3), precision)).float()
                both = logits.softmax(1) + mirrored.softmax(1)
                flip_correct += (both.argmax(1) == y).sum().item()
        nll += F.cross_entropy(logits, y, reduction="sum").item()
        hits.append((logits.argmax(1) == y).cpu())
    correct = torch.cat(hits) if hits else torch.zeros(0, dtype=torch.bool)
    count = max(1, len(split.labels))
    flip_accuracy = flip_correct / count if flip else None
    return Evaluation(correct.sum().item() / count, nll / count, len(split.labels), flip_accuracy, correct)


def score_checkpoint(checkpoint: str | Path, test: Split, device: torch.device) -> correctness.Correctness:
    """Score the saved checkpoint (its stored weights, fp16 where saved so, run in fp32) image by image on the
    test split and store the bits beside it (`engine.models.correctness`): the weights the app and benches load."""
    from ..models.registry import load_checkpoint

    model, _ = load_checkpoint(checkpoint)
    scored = evaluate(model.to(device), test, device)
    correctness.save(checkpoint, scored.correct.numpy(), test.labels.numpy())
    return correctness.load(checkpoint)


def explicit_attention(model: nn.Module, device: torch.device, precision: str) -> None:
    """Switch timm's attention layers to their explicit path (q @ k^T, softmax, @ v) where it trains faster: on a
    CPU in bf16, whose fused flash-attention backward is slow at CIFAR's 65 tokens (`bench/train_speed.py`:
    the ViT's bf16 step 1.8x faster). The same function either way."""
    if device.type != "cpu" or precision != "bf16":
        return
    for layer in model.modules():
        if hasattr(layer, "fused_attn"):
            layer.fused_attn = False


def _memory_format(x: torch.Tensor, precision: str) -> torch.Tensor:
    return x.contiguous(memory_format=torch.channels_last) if precision == "bf16" else x


def _mixer(cfg: TrainConfig, num_classes: int):
    """timm's Mixup/CutMix with label smoothing, or plain smoothed one-hot targets without them."""
    from timm.data import Mixup

    if cfg.mixup > 0 or cfg.cutmix > 0:
        return Mixup(
            mixup_alpha=cfg.mixup, cutmix_alpha=cfg.cutmix, label_smoothing=cfg.smoothing, num_classes=num_classes
        )
    on = 1.0 - cfg.smoothing + cfg.smoothing / num_classes
    return lambda x, y: (
        x,
        F.one_hot(y, num_classes).float() * (on - cfg.smoothing / num_classes) + cfg.smoothing / num_classes,
    )


def _seed_epoch(seed: int, epoch: int) -> torch.Generator:
    """Seed every random source for `epoch`; returns the generator of the batch order and crops."""
    torch.manual_seed(seed * 10_007 + epoch)
    np.random.seed((seed * 10_007 + epoch) % 2**32)
    return torch.Generator().manual_seed(seed * 10_007 + epoch)


def make_optimizer(cfg: TrainConfig, model: nn.Module, device: torch.device) -> torch.optim.Optimizer:
    """AdamW (its fused step, on CUDA and CPU), or SGD with Nesterov momentum 0.9, without weight decay on norms
    and biases."""
    groups = param_groups(model, cfg.weight_decay)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=cfg.lr, fused=device.type in ("cuda", "cpu"))
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=0.9, nesterov=True)
    raise EngineError(f"--optimizer must be adamw or sgd, not {cfg.optimizer!r}")


@dataclass
class Position:
    """Where a run stands: `batch` batches of epoch `epoch` done, `step` optimizer steps in all, `elapsed`
    seconds of training, and the epoch's running loss and correct count so far."""

    epoch: int = 0
    batch: int = 0
    step: int = 0
    elapsed: float = 0.0
    loss_sum: float = 0.0
    correct: float = 0.0


def _random_states(generator: torch.Generator) -> dict:
    """The batch generator's, torch's and numpy's random states, as tensors and numbers (for weights-only loading)."""
    name, keys, *rest = np.random.get_state()
    return {
        "generator": generator.get_state(),
        "torch": torch.get_rng_state(),
        "numpy": [name, torch.from_numpy(keys.copy()), *rest],
    }


def _restore_random_states(states: dict, generator: torch.Generator) -> None:
    generator.set_state(states["generator"])
    torch.set_rng_state(states["torch"])
    name, keys, *rest = states["numpy"]
    np.random.set_state((name, keys.numpy(), *rest))


def train(cfg: TrainConfig) -> TrainResult:
    """Train per `cfg`, writing the checkpoint and training state each epoch (and every `save_minutes`),
    and the evaluations at the end."""
    from timm.utils import ModelEmaV3

    device = resolve_device(cfg.device)
    precision = resolve_precision(cfg.precision, device)
    if cfg.trajectory_points < 0:
        raise EngineError(f"--trajectory-points must be 0 (none) or more, not {cfg.trajectory_points}")
    if not 0 <= cfg.ema < 1:
        raise EngineError(f"--ema must be a decay in [0, 1), not {cfg.ema}")
    if not cfg.resume:  # fail on a bad model name or placement before decoding the data
        get_spec(cfg.model)
        cfg.build_options(10)
    torch.manual_seed(cfg.seed)
    data = load_data(cfg.data, cfg.limit_train, cfg.limit_test, cfg.seed)
    resume_state = None
    if cfg.resume:
        resume_state = _read_state(cfg.resume)
        resumed_meta = ckpt.read_meta(cfg.resume)
        architecture, options = resumed_meta.architecture, resumed_meta.options
        model = get_spec(architecture).build(**options, drop_path_rate=cfg.drop_path)
        model.load_state_dict(resume_state["model"])
    else:
        architecture, options = cfg.model, cfg.build_options(len(data.classes))
        model = get_spec(architecture).build(**options, drop_path_rate=cfg.drop_path)
    out = cfg.out or CHECKPOINTS / checkpoint_stem(architecture, options)
    model = model.to(device)
    explicit_attention(model, device, precision)
    channels_last = precision == "bf16" if cfg.channels_last is None else cfg.channels_last
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    step_model = torch.compile(model) if cfg.compile else model
    optimizer = make_optimizer(cfg, model, device)
    ema = ModelEmaV3(model, decay=cfg.ema, use_warmup=True) if cfg.ema else None
    steps_per_epoch = len(data.train.labels) // cfg.batch_size
    if steps_per_epoch == 0 or cfg.batch_size % 2:
        raise EngineError(
            f"batch size {cfg.batch_size} must be even and at most the {len(data.train.labels)} training images"
        )
    budget_s = None if cfg.budget is None else 60 * cfg.budget
    epochs = cfg.epochs if budget_s is None else math.inf
    total, warmup = steps_per_epoch * cfg.epochs, round(steps_per_epoch * cfg.warmup_epochs)
    at = Position()
    if resume_state is not None:
        optimizer.load_state_dict(resume_state["optimizer"])
        if ema is not None:
            ema.module.load_state_dict(resume_state["ema"])
        at = Position(**resume_state["position"])
    train_images, train_labels = data.train.images.to(device), data.train.labels.to(device)
    normalize, mix = Normalize(device), _mixer(cfg, len(data.classes))
    meta = ckpt.CheckpointMeta(architecture, options, list(data.classes), cfg.recipe(), data.description)
    meta.device, meta.precision = _device_name(device), precision
    losses, seen, run_time, run_steps = [], 0, 0.0, 0
    end_epoch = epochs if cfg.stop_after is None else min(epochs, at.epoch + cfg.stop_after)
    out_of_time = interrupted = False
    recorder = None
    if cfg.trajectory_points:
        resumed = _trajectory_dir(cfg.resume) if cfg.resume else None
        recorder = TrajectoryRecorder.start(_trajectory_dir(out), cfg.trajectory_points, resumed, resume_state)

    def save(generator: torch.Generator) -> None:
        meta.epochs = round(at.step / steps_per_epoch, 2) if at.batch or budget_s is not None else at.epoch
        meta.minutes = round(at.elapsed / 60, 1)
        meta.images_per_s = round(seen / run_time, 1) if run_time else meta.images_per_s
        ckpt.save(ema.module if ema is not None else model, out, meta, half=cfg.half)
        state = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "position": asdict(at),
            "ema": ema.module.state_dict() if ema is not None else None,
            "random": _random_states(generator),
            "trajectory": recorder.state() if recorder is not None else None,
        }
        torch.save(state, _state_file(out))

    try:
        while at.epoch < end_epoch and not (out_of_time or interrupted):
            generator = _seed_epoch(cfg.seed, at.epoch)
            order = torch.randperm(len(train_labels), generator=generator).to(device)
            if at.batch and resume_state is not None:  # resumed mid-epoch: the same draws go on
                _restore_random_states(resume_state["random"], generator)
            model.train()
            of = f"/{cfg.epochs}" if budget_s is None else f" of {cfg.budget:g} min"
            bar = tqdm(
                range(at.batch, steps_per_epoch),
                desc=f"epoch {at.epoch + 1}{of} [{precision}, {device.type}]",
                disable=not cfg.progress,
                initial=at.batch,
                total=steps_per_epoch,
            )
            tick = last_save = time.perf_counter()
            counted = at.batch  # batches of this epoch already in `seen`

            def account() -> None:
                nonlocal tick, counted, run_time, seen
                now = time.perf_counter()
                at.elapsed, run_time, tick = at.elapsed + now - tick, run_time + now - tick, now
                seen, counted = seen + (at.batch - counted) * cfg.batch_size, at.batch

            for i in bar:
                idx = order[i * cfg.batch_size : (i + 1) * cfg.batch_size]
                x = normalize(crop_flip(train_images[idx], generator))
                x, target = mix(x, train_labels[idx])
                progress = None if budget_s is None else (at.elapsed + time.perf_counter() - tick) / budget_s
                if recorder is not None:
                    recorder.take(model, at.step / total if progress is None else progress, at.step / steps_per_epoch)
                for group in optimizer.param_groups:
                    group["lr"] = lr_at(at.step, total, warmup, cfg.lr, progress)
                with torch.autocast(device.type, torch.bfloat16, enabled=precision == "bf16"):
                    logits = step_model(x.contiguous(memory_format=torch.channels_last) if channels_last else x)
                loss = torch.sum(-target * F.log_softmax(logits.float(), dim=-1), dim=-1).mean()
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                if ema is not None:
                    ema.update(model, at.step)
                at.loss_sum += loss.item()
                at.correct += (logits.argmax(1) == target.argmax(1)).sum().item()
                at.step, at.batch, run_steps = at.step + 1, i + 1, run_steps + 1
                if i % 20 == 19 or i == steps_per_epoch - 1:
                    rate = (i + 1 - counted) * cfg.batch_size / max(1e-9, time.perf_counter() - tick)
                    bar.set_postfix(
                        loss=f"{at.loss_sum / (i + 1):.3f}",
                        acc=f"{at.correct / ((i + 1) * cfg.batch_size):.3f}",
                        img_s=f"{rate:.0f}",
                    )
                out_of_time = budget_s is not None and at.elapsed + time.perf_counter() - tick >= budget_s
                interrupted = cfg.stop_after_steps is not None and run_steps >= cfg.stop_after_steps
                if out_of_time or interrupted:
                    break
                if i + 1 < steps_per_epoch and time.perf_counter() - last_save >= 60 * cfg.save_minutes:
                    account()
                    save(generator)
                    tick = last_save = time.perf_counter()
            bar.close()
            account()
            if at.batch == steps_per_epoch:
                losses.append(at.loss_sum / steps_per_epoch)
                at = Position(at.epoch + 1, 0, at.step, at.elapsed)
            if at.epoch % cfg.save_every == 0 or at.epoch == end_epoch or out_of_time or interrupted:
                save(generator)
        if recorder is not None and (out_of_time or at.epoch >= epochs):  # the schedule's end: w_optimal
            meta.trajectory = recorder.finish(model)
    except BaseException:
        if recorder is not None:
            recorder.discard()
        raise
    final = ema.module if ema is not None else model
    evaluation = evaluate(final, data.test, device, cfg.eval_batch_size, precision, flip=True)
    meta.test_accuracy, meta.test_nll, meta.test_images = evaluation.accuracy, evaluation.nll, evaluation.count
    meta.test_accuracy_flip = evaluation.flip_accuracy
    if ema is not None:
        meta.raw_test_accuracy = evaluate(model, data.test, device, cfg.eval_batch_size, precision).accuracy
    if tuple(data.classes) == CIFAR10_CLASSES:
        meta.subset_accuracy = evaluate(final, subset_split(), device, cfg.eval_batch_size, precision).accuracy
    path = ckpt.save(final, out, meta, half=cfg.half)
    if tuple(data.classes) == CIFAR10_CLASSES and cfg.limit_test is None:
        score_checkpoint(path, data.test, device)
    return TrainResult(final.eval(), path, evaluation, losses, seen / run_time if run_time else 0.0)


def _device_name(device: torch.device) -> str:
    """'cuda: <GPU name>' or 'cpu: <N> threads'."""
    if device.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(device)}"
    return f"cpu: {torch.get_num_threads()} threads"


def _state_file(checkpoint: str | Path) -> Path:
    weights, _ = ckpt.paths(checkpoint)
    return Path(str(weights)[: -len(".safetensors")] + ".state.pt")


def _trajectory_dir(checkpoint: str | Path) -> Path:
    """The folder of a run's weight snapshots (Fig 1b), beside its state file."""
    state = _state_file(checkpoint)
    return state.with_name(state.name[: -len(".state.pt")] + ".trajectory")


def _read_state(checkpoint: str | Path) -> dict:
    path = _state_file(checkpoint)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError) as exc:
        raise CheckpointError(
            f"cannot resume from {checkpoint}: its training state {path} is unreadable ({exc})"
        ) from exc


def parse_args(argv: list[str] | None = None) -> TrainConfig:
    d = TrainConfig()
    p = argparse.ArgumentParser(prog="python -m engine.training.train", description=__doc__.splitlines()[0])
    p.add_argument("--model", default=d.model, help="alternet, preact_resnet or vit_cifar")
    p.add_argument("--msa", default=None, help="MSA placement, e.g. 's3:6,s4:2,s4:4' or 'none' (alternet)")
    p.add_argument("--data", default=d.data, help="ImageFolder DIR with train/ and test/, or 'cifar10'")
    p.add_argument(
        "--out",
        default=None,
        help="checkpoint path X (X.safetensors, X.json); default: the bundled "
        "assets/checkpoints/<name> that the model's 'pretrained' weights load",
    )
    p.add_argument("--depths", default=None, help="blocks per stage, e.g. 3,4,6,4")
    p.add_argument("--width", type=int, default=None, help="stage-1 bottleneck width (64 as ResNet-50)")
    for name in ("epochs", "batch-size", "seed", "limit-train", "limit-test", "eval-batch-size", "save-every"):
        p.add_argument(f"--{name}", type=int, default=getattr(d, name.replace("-", "_")))
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        help="minutes of training; the schedule fits this time instead of --epochs",
    )
    p.add_argument(
        "--precision", default=d.precision, help="auto (bf16 on CUDA and CPUs with bf16 units), bf16 or fp32"
    )
    p.add_argument("--stop-after", type=int, default=None, help="end this run after N epochs; --resume goes on")
    p.add_argument(
        "--stop-after-steps", type=int, default=None, help="end this run after N optimizer steps; --resume goes on"
    )
    p.add_argument(
        "--save-minutes",
        type=float,
        default=d.save_minutes,
        help="also save the training state this often within an epoch",
    )
    p.add_argument("--optimizer", default=d.optimizer, help="adamw, or sgd (Nesterov, momentum 0.9)")
    p.add_argument(
        "--ema",
        type=float,
        default=d.ema,
        help="decay of the weights' moving average, saved instead of the weights (0: none)",
    )
    p.add_argument("--recipe", dest="recipe_name", default="", help="the recipe's name, recorded in the sidecar")
    for name in ("lr", "weight-decay", "warmup-epochs", "smoothing", "mixup", "cutmix", "drop-path"):
        p.add_argument(f"--{name}", type=float, default=getattr(d, name.replace("-", "_")))
    p.add_argument("--device", default=d.device)
    p.add_argument("--resume", default=None, help="checkpoint to continue from (its .state.pt beside it)")
    p.add_argument("--compile", action="store_true", help="torch.compile the training step")
    p.add_argument("--half", action="store_true", help="store the weights as fp16")
    p.add_argument(
        "--channels-last",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the model and its inputs in channels_last (default: with bf16)",
    )
    p.add_argument(
        "--trajectory-points",
        type=int,
        default=d.trajectory_points,
        help="weight snapshots over the run for Fig 1b's trajectory in the sidecar (0: none)",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false")
    args = vars(p.parse_args(argv))
    if args["depths"] is not None:
        args["depths"] = tuple(int(v) for v in args["depths"].split(","))
    return TrainConfig(**args)


def main(argv: list[str] | None = None) -> TrainResult:
    result = train(parse_args(argv))
    e = result.evaluation
    print(
        f"test accuracy {e.accuracy:.4f}, NLL {e.nll:.4f} on {e.count} images; {result.images_per_s:.0f} img/s; "
        f"{result.checkpoint}",
        flush=True,
    )
    return result


if __name__ == "__main__":
    try:
        main()
    except EngineError as exc:
        raise SystemExit(f"error: {exc}") from None
