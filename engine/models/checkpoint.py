"""Trained checkpoints: `X.safetensors` (weights) beside `X.json` (how to rebuild and how trained).

This module only reads and writes the files; `engine.models.registry.load_checkpoint` rebuilds the exact
architecture the sidecar names and loads the weights strictly.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from torch import nn

from ..errors import CheckpointError

REPO = Path(__file__).resolve().parents[2]


@dataclass
class CheckpointMeta:
    """The sidecar: `architecture` and `options` rebuild the model; the rest says how it was trained."""

    architecture: str
    options: dict
    classes: list[str]
    recipe: dict = field(default_factory=dict)
    data: str = ""
    epochs: float = 0  # whole epochs, or a fraction with --budget
    test_accuracy: float | None = None
    test_accuracy_flip: float | None = None  # with flip test-time augmentation; the app uses the plain model
    raw_test_accuracy: float | None = None  # of the last weights, where their moving average is what is saved
    test_nll: float | None = None
    test_images: int | None = None
    subset_accuracy: float | None = None  # on the bundled 1,000-image test subset
    images_per_s: float | None = None
    device: str = ""
    precision: str = ""
    minutes: float | None = None  # training time
    trajectory: dict | None = None  # Fig 1b: {"epochs", "r", "theta_deg"} of the weights around the final ones
    date: str = ""
    commit: str | None = None

    def identity(self) -> str:
        """What tells this training run's checkpoint from a retrained one ('40 epochs, finished
        2026-11-25T09:08:53+00:00'): stored beside each measurement made with it, to see when it was replaced."""
        return f"{self.epochs:g} epochs, finished {self.date}"


def paths(path: str | Path) -> tuple[Path, Path]:
    """(weights, sidecar) for `X`, `X.safetensors` or `X.json`."""
    text = str(path)
    for suffix in (".safetensors", ".json"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
    return Path(text + ".safetensors"), Path(text + ".json")


def git_commit() -> str | None:
    """The checked-out commit of this repository, None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def save(model: nn.Module, path: str | Path, meta: CheckpointMeta, half: bool = False) -> Path:
    """Write the weights (fp16 floats when `half`) and the sidecar, stamped with date and commit."""
    from safetensors.torch import save_file

    weights, sidecar = paths(path)
    weights.parent.mkdir(parents=True, exist_ok=True)
    state = {}
    for key, value in model.state_dict().items():
        value = value.detach().to("cpu").contiguous()
        state[key] = value.half() if half and value.is_floating_point() else value
    meta.date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    meta.commit = git_commit()
    save_file(state, str(weights), metadata={"architecture": meta.architecture, "options": json.dumps(meta.options)})
    sidecar.write_text(json.dumps(asdict(meta), indent=2) + "\n")
    return weights


def read_meta(path: str | Path) -> CheckpointMeta:
    """The sidecar of checkpoint `path`."""
    _, sidecar = paths(path)
    if not sidecar.is_file():
        raise CheckpointError(f"checkpoint {path} has no sidecar {sidecar}: its architecture is unknown")
    try:
        return CheckpointMeta(**json.loads(sidecar.read_text()))
    except (ValueError, TypeError) as exc:
        raise CheckpointError(f"sidecar {sidecar} is not a checkpoint description: {exc}") from exc
