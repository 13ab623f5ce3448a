"""Fig 12b's CIFAR-10-C corruptions against computations by hand, CorruptionRobustness on a tiny model, and the
per-image bits of a bundled model against the accuracies the analysis measures and its predictions."""

from __future__ import annotations

import colorsys
import json
import zlib

import numpy as np
import pytest
import torch
from PIL import Image
from scipy import ndimage

import engine
from engine.analyses.corruption import CORRUPTIONS, CorruptionRobustness, corrupt
from engine.data.cifar_subset import balanced, subset
from engine.errors import EngineError
from engine.paper.findings import (
    FINDINGS,
    STORE,
    corruption_correct,
    corruption_disagreements,
    load_member,
    members,
    unpack_bits,
)

RANDOM = {
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "speckle_noise",
    "glass_blur",
    "motion_blur",
    "snow",
    "fog",
    "elastic_transform",
}
# mean |corrupted - clean| grows with every severity step for these (on the images below, seed 0)
MONOTONE = {
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "speckle_noise",
    "defocus_blur",
    "gaussian_blur",
    "zoom_blur",
    "snow",
    "fog",
    "brightness",
    "contrast",
    "pixelate",
    "jpeg_compression",
}


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return subset()[0][balanced(10)]


def distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.float64) - b).mean())


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruption_is_seeded_and_keeps_shape_and_dtype(name, images):
    image = images[0]
    for severity in (1, 5):
        out = corrupt(image, name, severity, np.random.default_rng(7))
        assert out.shape == image.shape and out.dtype == np.uint8
        np.testing.assert_array_equal(out, corrupt(image, name, severity, np.random.default_rng(7)))
        assert not np.array_equal(out, image)
        other = corrupt(image, name, severity, np.random.default_rng(8))
        assert np.array_equal(out, other) != (name in RANDOM)


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_severity_5_corrupts_more_than_severity_1(name, images):
    mean = [np.mean([distance(corrupt(x, name, s, np.random.default_rng(0)), x) for x in images]) for s in range(1, 6)]
    if name == "elastic_transform":  # the reference's affine jitter shrinks with severity (2.56 px to 0.96 px)
        assert mean[0] > mean[4]
    elif name in MONOTONE:
        assert all(a < b for a, b in zip(mean, mean[1:])), mean
    else:
        assert mean[4] > mean[0], mean


def test_gaussian_noise_is_clipped_normal_noise(images):
    x = images[1]
    expected = np.clip(x / 255.0 + np.random.default_rng(3).normal(0.0, 0.10, x.shape), 0, 1) * 255
    np.testing.assert_array_equal(corrupt(x, "gaussian_noise", 5, np.random.default_rng(3)), expected.astype(np.uint8))


def hsv_by_hand(image: np.ndarray, edit) -> np.ndarray:
    """Each pixel through colorsys's HSV with `edit(h, s, v) -> (h, s, v)`, scaled to [0, 255] (floats)."""
    out = [colorsys.hsv_to_rgb(*edit(*colorsys.rgb_to_hsv(*(pixel / 255.0)))) for pixel in image.reshape(-1, 3)]
    return np.clip(np.array(out), 0, 1).reshape(image.shape) * 255


def assert_truncates(out: np.ndarray, exact: np.ndarray) -> None:
    """`out` is `exact` truncated to uint8; where `exact` is an integer up to rounding error, either side."""
    nearest = np.rint(exact)
    at_integer = np.abs(exact - nearest) < 1e-9
    ok = (out == np.floor(exact)) | (at_integer & ((out == nearest) | (out == nearest - 1)))
    assert ok.all(), np.argwhere(~ok)[:5]


@pytest.fixture(scope="module")
def with_grays(images) -> np.ndarray:
    """An image with black, gray and white pixels, where hue is undefined."""
    x = images[2].copy()
    x[0, :4] = [[0, 0, 0], [128, 128, 128], [255, 255, 255], [3, 3, 3]]
    return x


def test_brightness_adds_to_the_hsv_value(with_grays):
    for severity, shift in [(1, 0.05), (5, 0.3)]:
        exact = hsv_by_hand(with_grays, lambda h, s, v: (h, s, min(v + shift, 1.0)))
        assert_truncates(corrupt(with_grays, "brightness", severity, np.random.default_rng(0)), exact)


def test_saturate_scales_the_hsv_saturation(with_grays):
    for severity, gain, offset in [(2, 0.1, 0.0), (5, 2.5, 0.2)]:
        exact = hsv_by_hand(with_grays, lambda h, s, v: (h, min(max(s * gain + offset, 0.0), 1.0), v))
        assert_truncates(corrupt(with_grays, "saturate", severity, np.random.default_rng(0)), exact)


def box_resize(x: np.ndarray, height: int, width: int) -> np.ndarray:
    """PIL's BOX resampling by hand: an output pixel averages the input pixels whose centers fall in its box
    (scaled to at least one pixel), horizontal pass first, each pass rounded to uint8."""

    def weights(n_in: int, n_out: int) -> np.ndarray:
        scale = n_in / n_out
        offset = (np.arange(n_in)[None, :] + 0.5 - (np.arange(n_out)[:, None] + 0.5) * scale) / max(scale, 1.0)
        inside = ((offset > -0.5) & (offset <= 0.5)).astype(np.float64)
        return inside / inside.sum(1, keepdims=True)

    rows = np.floor(np.einsum("wj,hjc->hwc", weights(x.shape[1], width), x.astype(np.float64)) + 0.5)
    return np.floor(np.einsum("hi,iwc->hwc", weights(x.shape[0], height), rows) + 0.5).astype(np.uint8)


def test_pixelate_is_a_box_down_and_up_scale(images):
    x = images[3]
    for severity, size in [(1, 30), (4, 24), (5, 20)]:
        expected = box_resize(box_resize(x, size, size), 32, 32)
        np.testing.assert_array_equal(corrupt(x, "pixelate", severity, np.random.default_rng(0)), expected)


def test_zoom_blur_averages_scipy_zooms(images):
    """The mean of the image and its center zooms by 1, 1.01, ... (scipy.ndimage.zoom, bilinear, cropped)."""
    x = images[4] / 255.0
    for severity, stop in [(1, 1.06), (5, 1.26)]:
        factors = np.arange(1, stop, 0.01)  # the reference's: 7 steps for 1.06 (the float stop is reached)
        total = x.copy()
        for factor in factors:
            crop = int(np.ceil(32 / factor))
            top = (32 - crop) // 2
            zoomed = ndimage.zoom(x[top : top + crop, top : top + crop], (factor, factor, 1), order=1)
            trim = (zoomed.shape[0] - 32) // 2
            total += zoomed[trim : trim + 32, trim : trim + 32]
        out = corrupt(images[4], "zoom_blur", severity, np.random.default_rng(0))
        assert_truncates(out, total / (len(factors) + 1) * 255)


def test_bad_arguments_are_refused(images):
    with pytest.raises(EngineError, match="unknown corruption"):
        corrupt(images[0], "frost", 1, np.random.default_rng(0))
    with pytest.raises(EngineError, match="severity"):
        corrupt(images[0], "fog", 6, np.random.default_rng(0))
    with pytest.raises(EngineError, match="uint8"):
        corrupt(images[0].astype(np.float32), "fog", 1, np.random.default_rng(0))


def test_accuracies_match_a_manual_loop():
    model = engine.create_model(
        "alternet", weights="random", seed=2, device="cpu", width=4, depths=(1, 1, 1, 2), msa="s4:2"
    )
    images = subset()[0][balanced(20)]
    names, severities, seed = ["gaussian_noise", "fog", "contrast"], [1, 5], 3

    def predict(batch: np.ndarray) -> torch.Tensor:
        with torch.no_grad():
            return model.module(torch.stack([model.transform(Image.fromarray(x)) for x in batch])).argmax(-1)

    labels = predict(images)  # the random model's own clean predictions, so corruptions change accuracy
    calls = []
    result = CorruptionRobustness(model, names, severities, seed=seed, batch_size=8).attribute(
        images, labels.tolist(), progress=lambda done, total: calls.append((done, total))
    )

    assert result.clean_accuracy == 1.0 and result.images == 20
    assert calls == [(k, 6) for k in range(1, 7)]
    assert model.forward_passes == 7 * 3  # clean + 6 corrupted sets, 3 batches of at most 8 each
    for name in names:
        for k, severity in enumerate(severities):
            rng = np.random.default_rng([seed, zlib.crc32(name.encode()), severity])
            corrupted = np.stack([CORRUPTIONS[name](x, severity, rng) for x in images])
            assert result.accuracy[name][k] == pytest.approx(float((predict(corrupted) == labels).float().mean()))
    assert min(a for row in result.accuracy.values() for a in row) < 1.0
    assert result.mean_accuracy == pytest.approx(np.mean(list(result.accuracy.values())))
    assert result.accuracy_by_severity == pytest.approx(np.mean(list(result.accuracy.values()), axis=0))
    assert result.to_json()["accuracy_by_corruption"] == {n: pytest.approx(np.mean(result.accuracy[n])) for n in names}


@pytest.mark.slow  # over 3 s on the 2-core machine
def test_fig_12b_bits_give_the_analysis_accuracies_and_the_models_predictions():
    """Step 6's (bundled weights) bit per corrupted image (engine.paper.findings.corruption_correct, as
    scripts/score_test_split.py --corruption stores them), counted per corruption and severity, give the accuracy
    that CorruptionRobustness measures there, and one cell's bits are its predictions made by hand."""
    model = load_member("step6", device="cpu")
    images, labels = FINDINGS["corruption"].data(20)
    result = CorruptionRobustness(model, ["fog", "contrast"], [1, 5]).attribute(images, labels).to_json()
    run = {"result": result}
    bits = corruption_correct({"step6": model}, {"images": 20, "models": {"step6": run}})["step6"]
    cells = bits.reshape(2, 2, 20).mean(-1)
    measured = [result["accuracy"]["fog"], result["accuracy"]["contrast"]]
    assert np.float32(cells).tolist() == np.float32(measured).tolist()
    assert bits.mean() == pytest.approx(result["mean_accuracy"], abs=1e-7) and 0 < bits.mean() < 1
    assert corruption_disagreements(run, bits) == []
    flipped = bits.copy()
    flipped[2 * 20] ^= True  # contrast at severity 1, first image
    assert corruption_disagreements(run, flipped)[0].startswith("contrast severity 1: ")
    assert corruption_disagreements(run, bits[:-1]) == ["79 bits for 80 corrupted images"]
    rng = np.random.default_rng([0, zlib.crc32(b"fog"), 5])
    with torch.no_grad():
        batch = torch.stack([model.transform(Image.fromarray(CORRUPTIONS["fog"](x, 5, rng))) for x in images])
        predicted = model.module(batch).argmax(-1).numpy()
    assert (bits[20:40] == (predicted == labels)).all()  # fog at severity 5


def test_the_stored_fig_12b_bits_give_each_members_stored_accuracies():
    """Every member's stored bit per corrupted image (scripts/score_test_split.py --corruption), counted per
    corruption and severity, gives that cell's stored accuracy (float32), and over all cells the stored mean."""
    section = json.loads(STORE.read_text())["findings"]["corruption"]
    assert set(section["models"]) == set(members())  # the whole family, each with its bits
    for key, run in section["models"].items():
        result, images = run["result"], section["images"]
        shape = (len(result["corruptions"]), len(result["severities"]), images)
        bits = unpack_bits(run["correct"], int(np.prod(shape))).reshape(shape)
        for i, name in enumerate(result["corruptions"]):
            counted = bits[i].sum(-1) / images
            assert np.float32(counted).tolist() == np.float32(result["accuracy"][name]).tolist(), (key, name)
        assert bits.mean() == pytest.approx(result["mean_accuracy"], abs=1e-6), key
