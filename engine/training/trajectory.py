"""Fig 1b's weight trajectory: snapshots of the trainable parameters during training, and their polar
coordinates around the final weights."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import torch
from torch import nn

from ..errors import EngineError


def flat_parameters(model: nn.Module) -> np.ndarray:
    """Every trainable parameter, flattened in order into one fp32 vector on the CPU."""
    with torch.no_grad():
        return torch.cat([p.detach().float().flatten() for p in model.parameters() if p.requires_grad]).cpu().numpy()


def _vector(x: np.ndarray | torch.Tensor) -> np.ndarray:
    """A float64 copy of `x`, flattened (the caller's arrays are left alone)."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    return np.array(x, dtype=np.float64).ravel()


def polar_trajectory(
    snapshots: Iterable[np.ndarray] | torch.Tensor, final: np.ndarray | torch.Tensor
) -> tuple[np.ndarray, np.ndarray]:
    """Fig 1b: (r_t, θ_t in degrees) of weight snapshots w_t, the first at initialization, around the final
    weights: with Δw_t = w_t - final, r_t = |Δw_t| / |Δw_0| and θ_t = arccos(Δw_t·Δw_0 / (|Δw_t| |Δw_0|)),
    0 where Δw_t = 0. In float64, one snapshot at a time (they may be memory-mapped files)."""
    end = _vector(final)
    r, theta = [], []
    first = first_norm = None
    for snapshot in snapshots:
        delta = _vector(snapshot)
        if delta.shape != end.shape:
            raise EngineError(f"a snapshot of {delta.size} weights against final weights of {end.size}")
        delta -= end
        norm = float(np.linalg.norm(delta))
        if first is None:
            if norm == 0:
                raise EngineError("the first snapshot equals the final weights: training did not move them")
            first, first_norm = delta, norm
        r.append(norm / first_norm)
        cosine = 1.0 if delta is first or norm == 0 else float(delta @ first) / (norm * first_norm)
        theta.append(math.degrees(math.acos(min(1.0, max(-1.0, cosine)))))
    if first is None:
        raise EngineError("a weight trajectory needs at least one snapshot")
    return np.array(r), np.array(theta)


class TrajectoryRecorder:
    """Fig 1b's snapshots: at most one per step, when moment k (share k/points of the schedule done) is due,
    the trainable parameters into `folder`/k.npy; `epochs` holds the epoch (a float) of each."""

    def __init__(self, folder: Path, points: int, epochs: Sequence[float] = ()) -> None:
        self.folder, self.points, self.epochs = folder, points, list(epochs)

    @classmethod
    def start(
        cls, folder: Path, points: int, resumed: Path | None = None, state: dict | None = None
    ) -> TrajectoryRecorder:
        """A recorder into an empty `folder`, or on a resume one that goes on from the snapshots in `resumed`
        that the resumed run's training `state` lists."""
        earlier = (state or {}).get("trajectory") or {}
        epochs = list(earlier.get("epochs", []))
        files = [resumed / f"{k:04d}.npy" for k in range(len(epochs))] if resumed else []
        if resumed is not None and not (earlier.get("points") == points and all(f.is_file() for f in files)):
            print(
                f"note: the weight snapshots in {resumed} are missing or not of {points} points; "
                "this run's trajectory (Fig 1b) starts at the resume point",
                flush=True,
            )
            epochs, files = [], []
        if not (files and resumed.resolve() == folder.resolve()):  # else resumed in place: they are there
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            for file in files:
                shutil.copyfile(file, folder / file.name)
        return cls(folder, points, epochs)

    def take(self, model: nn.Module, progress: float, epoch: float) -> None:
        """Snapshot `model` if the next moment is due at `progress` (the share of the schedule done)."""
        k = len(self.epochs)
        if k < self.points and progress >= k / self.points:
            np.save(self.folder / f"{k:04d}.npy", flat_parameters(model))
            self.epochs.append(round(epoch, 4))

    def state(self) -> dict:
        """What a resumed run needs to go on: saved with the optimizer state."""
        return {"points": self.points, "epochs": list(self.epochs)}

    def finish(self, model: nn.Module) -> dict | None:
        """The sidecar's trajectory around `model`'s (final) weights, None without snapshots; deletes the folder."""
        try:
            if not self.epochs:
                return None
            snapshots = (np.load(self.folder / f"{k:04d}.npy", mmap_mode="r") for k in range(len(self.epochs)))
            r, theta = polar_trajectory(snapshots, flat_parameters(model))
            return {"epochs": self.epochs, "r": r.tolist(), "theta_deg": theta.tolist()}
        finally:
            self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
