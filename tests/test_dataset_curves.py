"""Dataset curves: streamed from a folder or ZIP, averaged per batch as the notebooks do, and the same
numbers from two torchrun processes (gloo) as from one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

import engine
from engine.analyses.dataset_curves import DatasetCurves
from engine.errors import ImageError
from tests.conftest import ROOT
from tests.helpers.notebook import notebook_fourier, notebook_variance

IMAGES = 7  # batches of 3: 3, 3 and 1, so per-batch averaging differs from averaging over images


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Seven photos of different sizes and modes, in two subfolders, and a text file."""
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    for i in range(IMAGES):
        sub = root / ("a" if i < 4 else "b")
        sub.mkdir(exist_ok=True)
        pixels = rng.integers(0, 256, (36 + 3 * i, 44 - 2 * i, 3), dtype=np.uint8)
        Image.fromarray(pixels).convert("L" if i == 5 else "RGB").save(sub / f"{i}.{'png' if i % 2 else 'jpg'}")
    (root / "b" / "notes.txt").write_text("not an image, not listed")
    return root


@pytest.fixture(scope="module")
def with_broken(folder, tmp_path_factory) -> Path:
    """The same and two unreadable images: nine files, so two processes' sampler pads one."""
    root = tmp_path_factory.mktemp("with-broken")
    shutil.copytree(folder, root, dirs_exist_ok=True)
    (root / "a" / "broken.png").write_bytes(b"\x89PNG truncated")
    (root / "b" / "z-broken.jpg").write_bytes(b"\xff\xd8 truncated")
    return root


@pytest.fixture(scope="module")
def model(one_thread):
    return engine.create_model("preact_resnet", "random", device="cpu")


def notebook_dataset_curves(model, paths: list[Path], batch_size: int) -> tuple[list[np.ndarray], list[float]]:
    """Block by block in numpy, as the notebooks do: per batch, each block's curve and variance; then
    their mean over batches."""
    specs = model.spec.blocks(model.module)
    per_batch: list[list[np.ndarray]] = []
    for start in range(0, len(paths), batch_size):
        x = torch.stack([model.transform(Image.open(p).convert("RGB")) for p in paths[start : start + batch_size]])
        latents: list[np.ndarray] = []
        handles = [s.module.register_forward_hook(lambda m, a, out: latents.append(out.numpy())) for s in specs]
        with torch.inference_mode():
            model.module(x)
        for handle in handles:
            handle.remove()
        per_batch.append(latents)
    curves = [np.mean([notebook_fourier(batch[i]) for batch in per_batch], axis=0) for i in range(len(specs))]
    variances = [float(np.mean([notebook_variance(batch[i]) for batch in per_batch])) for i in range(len(specs))]
    return curves, variances


def test_dataset_curves_average_per_batch_as_the_notebooks(folder, model):
    result = DatasetCurves(model, batch_size=3).attribute(folder)
    readable = sorted(p for p in folder.rglob("*.*") if p.suffix in (".jpg", ".png"))
    curves, variances = notebook_dataset_curves(model, readable, 3)
    assert result.model.images == IMAGES and result.batches == 3 and not result.skipped
    for block, curve, var in zip(result.model.blocks, curves, variances):
        np.testing.assert_allclose(block.fourier, curve, rtol=1e-4, atol=1e-5)
        assert block.variance == pytest.approx(var, rel=1e-4)
    # the per-batch mean is not the mean over images here: the test tells the two apart
    _, by_image = notebook_dataset_curves(model, readable, IMAGES)
    assert max(abs(b.variance / v - 1) for b, v in zip(result.model.blocks, by_image)) > 1e-3


def test_zip_streamed_by_workers_equals_folder(folder, model, tmp_path):
    archive = tmp_path / "images.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, path.relative_to(folder))
    from_folder = DatasetCurves(model, batch_size=3).attribute(folder, limit=5)
    from_zip = DatasetCurves(model, batch_size=3, workers=2).attribute(archive, limit=5)
    assert from_zip.model.images == from_folder.model.images == 5
    for a, b in zip(from_zip.model.blocks, from_folder.model.blocks):
        assert a.variance == b.variance and a.fourier == b.fourier


def test_unreadable_files_are_left_out_and_named(folder, with_broken, model):
    """Batches of four: [0-3], [broken, 4-6], [z-broken]; the same images in the same batches as
    [0-3], [4-6] without the broken files."""
    result = DatasetCurves(model, batch_size=4).attribute(with_broken)
    clean = DatasetCurves(model, batch_size=4).attribute(folder)
    assert result.skipped == ["a/broken.png", "b/z-broken.jpg"]
    assert (result.model.images, result.batches, clean.batches) == (IMAGES, 2, 2)
    for a, b in zip(result.model.blocks, clean.model.blocks):
        assert a.variance == pytest.approx(b.variance, rel=1e-6)


def test_bad_sources_say_what_is_wrong(tmp_path, model):
    with pytest.raises(ImageError, match="does not exist"):
        DatasetCurves(model).attribute(tmp_path / "missing")
    (tmp_path / "readme.txt").write_text("no images here")
    with pytest.raises(ImageError, match="holds no images"):
        DatasetCurves(model).attribute(tmp_path)


def run_cli(*args: str, processes: int = 1) -> subprocess.CompletedProcess:
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]
    command = [*(launcher if processes > 1 else [sys.executable]), "-m", "engine", "curves", *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_two_torchrun_processes_give_one_process_numbers(with_broken, tmp_path):
    """Nine files over two processes: the sampler pads one, which must not be counted."""
    common = [
        "--data",
        str(with_broken),
        "--model",
        "preact_resnet",
        "--weights",
        "random",
        "--batch-size",
        "4",
        "--workers",
        "0",
    ]
    one = run_cli(*common, "--json", str(tmp_path / "one.json"))
    two = run_cli(*common, "--json", str(tmp_path / "two.json"), processes=2)
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    a = json.loads((tmp_path / "one.json").read_text())["models"][0]
    b = json.loads((tmp_path / "two.json").read_text())["models"][0]
    assert (a["processes"], b["processes"]) == (1, 2)
    assert a["images"] == b["images"] == IMAGES and a["batches"] == b["batches"] == 2
    assert b["skipped"] == ["a/broken.png", "b/z-broken.jpg"]
    for x, y in zip(a["blocks"], b["blocks"]):
        assert x["variance"] == pytest.approx(y["variance"], rel=1e-6)
        np.testing.assert_allclose(x["fourier"], y["fourier"], rtol=1e-6, atol=1e-7)
    assert "images/s" in one.stdout and "2 process(es)" in two.stdout
    assert two.stdout.count("PreAct ResNet (CIFAR") == 1  # rank 0 alone prints and writes


def test_cli_rejects_a_batch_that_does_not_split(folder):
    done = run_cli(
        "--data",
        str(folder),
        "--model",
        "preact_resnet",
        "--weights",
        "random",
        "--batch-size",
        "3",
        "--workers",
        "0",
        processes=2,
    )
    assert done.returncode != 0  # each process exits with 2; torchrun reports the failure as 1
    assert "batch size 3 must be a multiple of the 2 processes" in done.stderr
