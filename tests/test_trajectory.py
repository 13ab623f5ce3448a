"""Fig 1b's weight trajectory: the polar coordinates by hand on known vectors, and tiny training runs that
record it into the sidecar (straight, stopped and resumed, failed, on a time budget)."""

import json
import math

import numpy as np
import pytest
import torch

from engine.errors import EngineError
from engine.models.registry import get_spec, load_checkpoint
from engine.training import train as trainer
from engine.training.train import main, parse_args
from engine.training.trajectory import polar_trajectory
from tests.conftest import two_class_folder

TINY = ["--model", "alternet", "--width", "4", "--depths", "1,1,2,2", "--msa", "s3:2,s4:2", "--batch-size", "16"]
QUICK = ["--mixup", "0", "--cutmix", "0", "--lr", "3e-3", "--warmup-epochs", "0.5", "--device", "cpu", "--no-progress"]


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Two classes of noise, red and blue: 32 training images (4 steps of 16 per epoch) and 4 test images each."""
    return two_class_folder(tmp_path_factory.mktemp("colours"), train=32, test=4, stripes=False)


def flat(module: torch.nn.Module) -> np.ndarray:
    return np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])


def sidecar(path) -> dict:
    return json.loads(path.with_suffix(".json").read_text())


def test_polar_coordinates_of_known_vectors():
    final = np.array([1.0, 1.0])
    deltas = [(2, 0), (0, 1), (1, 1), (-3, 0), (0, 0), (1, -1)]  # Δw_0 = (2, 0) along the x axis
    snapshots = [final + np.array(d, dtype=float) for d in deltas]
    r, theta = polar_trajectory(snapshots, final)
    np.testing.assert_allclose(r, [1, 0.5, math.sqrt(2) / 2, 1.5, 0, math.sqrt(2) / 2], rtol=1e-12)
    np.testing.assert_allclose(theta, [0, 90, 45, 180, 0, 45], atol=1e-9)  # arccos: the unsigned angle
    assert r[0] == 1 and theta[0] == 0
    assert np.array_equal(snapshots[1], [1, 2]) and np.array_equal(final, [1, 1])  # the inputs are left alone
    r_t, theta_t = polar_trajectory(torch.tensor(np.stack(snapshots), dtype=torch.float32), torch.tensor(final))
    np.testing.assert_allclose(r_t, r, rtol=1e-6)
    np.testing.assert_allclose(theta_t, theta, atol=1e-4)
    # the scale of Δw_0 cancels; in more dimensions the angle is the one between the two displacements
    r3, theta3 = polar_trajectory([np.array([10.0, 0, 0]), np.array([0, 5.0, 5.0])], np.zeros(3))
    np.testing.assert_allclose(r3, [1, math.sqrt(50) / 10])
    np.testing.assert_allclose(theta3, [0, 90])


@pytest.mark.parametrize(
    "snapshots, final, message",
    [
        ([], np.zeros(2), "at least one snapshot"),
        ([np.ones(2), np.zeros(2)], np.ones(2), "training did not move them"),
        ([np.ones(3)], np.zeros(2), "a snapshot of 3 weights against final weights of 2"),
    ],
)
def test_polar_coordinates_refuse_what_they_cannot_measure(snapshots, final, message):
    with pytest.raises(EngineError, match=message):
        polar_trajectory(snapshots, final)


def test_trajectory_in_the_sidecar_matches_hand_computation_and_survives_a_resume(folder, tmp_path):
    common = [*TINY, *QUICK, "--data", str(folder), "--epochs", "3", "--trajectory-points", "6"]
    main([*common, "--out", str(tmp_path / "straight")])
    trajectory = sidecar(tmp_path / "straight")["trajectory"]
    assert trajectory["epochs"] == [0, 0.5, 1.0, 1.5, 2.0, 2.5]  # 12 steps: moments every 2 steps
    assert len(trajectory["r"]) == len(trajectory["theta_deg"]) == 6
    assert trajectory["r"][0] == 1 and trajectory["theta_deg"][0] == 0
    assert all(r > 0 for r in trajectory["r"]) and all(0 <= t <= 180 for t in trajectory["theta_deg"])
    assert not (tmp_path / "straight.trajectory").exists()

    main([*common, "--stop-after", "1", "--out", str(tmp_path / "first")])  # steps 0..3: snapshots at 0 and 2
    kept = tmp_path / "first.trajectory"
    assert sorted(p.name for p in kept.iterdir()) == ["0000.npy", "0001.npy"]
    assert sidecar(tmp_path / "first")["trajectory"] is None  # no final weights yet
    w_init = np.load(kept / "0000.npy")
    torch.manual_seed(0)  # the trainer seeds, then builds: snapshot 0 is the initialization
    options = sidecar(tmp_path / "first")["options"]
    assert np.array_equal(w_init, flat(get_spec("alternet").build(**options, drop_path_rate=0.1)))
    w_epoch1 = flat(load_checkpoint(tmp_path / "first")[0])  # the weights after step 4: moment 2, epoch 1.0
    w_final = flat(load_checkpoint(tmp_path / "straight")[0])
    d0, d2 = (w_init - w_final).astype(np.float64), (w_epoch1 - w_final).astype(np.float64)
    r2 = np.linalg.norm(d2) / np.linalg.norm(d0)
    theta2 = np.degrees(np.arccos(d2 @ d0 / (np.linalg.norm(d2) * np.linalg.norm(d0))))
    assert trajectory["r"][2] == pytest.approx(r2, rel=1e-6) and trajectory["theta_deg"][2] == pytest.approx(
        theta2, rel=1e-6
    )

    main([*common, "--resume", str(tmp_path / "first"), "--out", str(tmp_path / "resumed")])
    resumed = sidecar(tmp_path / "resumed")["trajectory"]
    assert resumed["epochs"] == trajectory["epochs"]
    np.testing.assert_allclose(resumed["r"], trajectory["r"], rtol=1e-9)
    np.testing.assert_allclose(resumed["theta_deg"], trajectory["theta_deg"], atol=1e-7)
    assert not (tmp_path / "resumed.trajectory").exists() and kept.is_dir()  # copied: `first` can still resume


def test_a_failed_run_deletes_its_snapshots_and_a_resume_records_from_there(folder, tmp_path, monkeypatch, capsys):
    real_lr_at = trainer.lr_at

    def failing_lr_at(step, *args, **kwargs):
        if step == 5:  # in epoch 2, after the state of epoch 1 was saved
            raise RuntimeError("out of memory")
        return real_lr_at(step, *args, **kwargs)

    common = [*TINY, *QUICK, "--data", str(folder), "--epochs", "2", "--trajectory-points", "4"]
    monkeypatch.setattr(trainer, "lr_at", failing_lr_at)
    with pytest.raises(RuntimeError, match="out of memory"):
        main([*common, "--out", str(tmp_path / "failed")])
    assert not (tmp_path / "failed.trajectory").exists() and (tmp_path / "failed.state.pt").is_file()
    monkeypatch.setattr(trainer, "lr_at", real_lr_at)
    main([*common, "--resume", str(tmp_path / "failed"), "--out", str(tmp_path / "failed")])
    assert "trajectory (Fig 1b) starts at the resume point" in capsys.readouterr().out
    trajectory = sidecar(tmp_path / "failed")["trajectory"]
    assert trajectory["epochs"][0] == 1.0 and trajectory["r"][0] == 1 and trajectory["theta_deg"][0] == 0
    assert not (tmp_path / "failed.trajectory").exists()


def test_a_time_budget_spaces_snapshots_by_schedule_progress(folder, tmp_path):
    out = tmp_path / "budget"
    main([*TINY, *QUICK, "--data", str(folder), "--budget", "0.01", "--trajectory-points", "4", "--out", str(out)])
    trajectory = sidecar(out)["trajectory"]
    epochs = trajectory["epochs"]
    assert 1 <= len(epochs) <= 4 and epochs[0] == 0 and epochs == sorted(set(epochs))
    assert trajectory["r"][0] == 1 and trajectory["theta_deg"][0] == 0 and not (tmp_path / "budget.trajectory").exists()


def test_no_points_no_trajectory_and_a_negative_count_is_refused(folder, tmp_path):
    assert parse_args(["--trajectory-points", "7"]).trajectory_points == 7 and parse_args([]).trajectory_points == 20
    out = tmp_path / "plain"
    main(
        [
            *TINY,
            *QUICK,
            "--data",
            str(folder),
            "--epochs",
            "1",
            "--limit-train",
            "32",
            "--trajectory-points",
            "0",
            "--out",
            str(out),
        ]
    )
    assert sidecar(out)["trajectory"] is None and not (tmp_path / "plain.trajectory").exists()
    with pytest.raises(EngineError, match="--trajectory-points must be 0 \\(none\\) or more, not -1"):
        main([*TINY, *QUICK, "--data", str(folder), "--trajectory-points", "-1", "--out", str(out)])
