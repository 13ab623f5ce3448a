"""app.views.paper_plots draws the engine results' JSON: each figure's data are the result's numbers, and every
figure renders to JSON. The results come from the engine on tiny random-weight models (lesion and trajectory
dicts written by hand in their documented shape)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

import engine
from app.exports.paper_findings import along_d1
from app.views import paper_plots
from engine.analyses.corruption import CorruptionRobustness
from engine.analyses.hessian import HessianSpectrum
from engine.analyses.landscape import LossLandscape
from engine.analyses.noise import FrequencyNoise
from engine.analyses.similarity import FeatureSimilarity
from engine.data.cifar_subset import balanced, subset
from engine.models.cifar_family import cifar_transform
from engine.models.registry import LoadedModel
from engine.paper.findings import STORE
from tests.helpers.saddle import Saddle

ALTERNET = {"width": 4, "depths": (1, 1, 1, 2), "msa": "s4:2"}
TINY_VIT = {"patch_size": 8, "embed_dim": 16, "depth": 2, "num_heads": 2}


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def models() -> dict[str, engine.LoadedModel]:
    return {
        "AlterNet": engine.create_model("alternet", weights="random", seed=2, device="cpu", **ALTERNET),
        "ViT": engine.create_model("vit_cifar", weights="random", seed=1, device="cpu", **TINY_VIT),
    }


@pytest.fixture(scope="module")
def data(models) -> tuple[np.ndarray, torch.Tensor, list[int]]:
    """8 subset images (uint8 and preprocessed, both models use the CIFAR transform) and their labels."""
    images, labels = subset()
    index = balanced(10)[:8]
    return images[index], HessianSpectrum(models["AlterNet"]).inputs(list(images[index])), labels[index].tolist()


def rendered(fig: go.Figure) -> dict:
    """The figure as plotly.js gets it, with the title naming the paper's figure and a legend shown."""
    out = json.loads(fig.to_json())
    assert out["layout"]["title"]["text"].startswith("Fig ")
    assert 380 <= out["layout"]["height"] <= 520  # Fig 1b's quarter circle gets the most
    assert any(trace.get("showlegend", True) and trace.get("name") for trace in out["data"])
    return out


def test_noise_lines_are_the_accuracy_drop_or_without_labels_the_probability_drop(models, data):
    _, x, labels = data
    noise = FrequencyNoise(models["AlterNet"], rms=2.0, bands=3).attribute(x, labels).to_json()
    photo = FrequencyNoise(models["ViT"], rms=2.0, bands=3).attribute(x[:1]).to_json()
    fig = paper_plots.noise_figure({"AlterNet": {**noise, "random_weights": True}, "ViT": photo})
    rendered(fig)
    labeled, unlabeled = fig.data
    assert labeled.name == "AlterNet (random weights)" and unlabeled.name == "ViT · top-1 probability"
    assert list(labeled.x) == [0.0, 0.5, 1.0]
    assert list(labeled.y) == pytest.approx([100 * d for d in noise["accuracy_drop"]])
    assert photo["accuracy_drop"] is None
    assert list(unlabeled.y) == pytest.approx([100 * d for d in photo["probability_drop"]])
    assert fig.layout.yaxis.title.text == "Accuracy drop / Top-1 probability drop (pp)"
    only_photo = paper_plots.noise_figure({"ViT": photo})
    assert only_photo.layout.yaxis.title.text == "Top-1 probability drop (pp)"


def test_similarity_heat_map_is_the_cka_with_bold_msa_ticks(models, data):
    _, x, _ = data
    sim = FeatureSimilarity(models["ViT"], models["AlterNet"], batch_size=8).attribute(x).to_json()
    fig = paper_plots.similarity_figure(sim, "ViT", "AlterNet")
    rendered(fig)
    heat = fig.data[0]
    assert np.array(heat.z) == pytest.approx(np.array(sim["cka"]))
    assert (heat.zmin, heat.zmax) == (0, 1)
    assert list(fig.layout.yaxis.ticktext) == ["E", "<b>1</b>", "2", "<b>3</b>", "4"]  # ViT: embed, (msa, mlp) x 2
    msa = [k for k, kind in enumerate(sim["column_kinds"]) if kind == "msa"]
    assert msa and all(fig.layout.xaxis.ticktext[k] == f"<b>{sim['column_labels'][k]}</b>" for k in msa)
    assert "P" in sim["column_labels"] and "P" in fig.layout.xaxis.ticktext
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.yaxis.scaleanchor == "x"


LESION = {
    "clean_accuracy": 0.9,
    "units": [  # block 2 (subsampling) cannot be switched off, so is not listed
        {"index": 1, "name": "stage1.0", "kind": "conv", "normalized_depth": 0.2, "accuracy": 0.8, "drop": 0.1},
        {"index": 3, "name": "stage2.0", "kind": "conv", "normalized_depth": 0.6, "accuracy": 0.85, "drop": 0.05},
        {"index": 4, "name": "stage2.1", "kind": "conv", "normalized_depth": 0.8, "accuracy": 0.9, "drop": 0.0},
        {"index": 5, "name": "stage2.msa", "kind": "msa", "normalized_depth": 1.0, "accuracy": 0.3, "drop": 0.6},
    ],
}


def test_lesion_lines_are_the_drops_with_msa_and_subsampling_shaded():
    other = {
        "clean_accuracy": 0.5,
        "units": [
            {"index": 1, "name": "block1.msa", "kind": "msa", "normalized_depth": 0.5, "accuracy": 0.55, "drop": -0.05},
            {"index": 2, "name": "block1.mlp", "kind": "mlp", "normalized_depth": 1.0, "accuracy": 0.2, "drop": 0.3},
        ],
    }
    fig = paper_plots.lesion_figure({"ResNet-ish": LESION, "ViT-ish": other})
    rendered(fig)
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in lines] == ["ResNet-ish", "ViT-ish"]
    assert list(lines[0].x) == [0.2, 0.6, 0.8, 1.0] and list(lines[0].y) == pytest.approx([10, 5, 0, 60])
    assert list(lines[1].y) == pytest.approx([-5, 30])
    shades = [t for t in fig.data if t.fill == "toself"]
    gray, blue = (paper_plots.SHADES[kind][0] for kind in ("msa", "pool"))
    spans = {(t.fillcolor, t.legendgroup): [x for x in t.x if x is not None] for t in shades}
    assert spans[(gray, "ResNet-ish")] == pytest.approx([0.8, 1.0, 1.0, 0.8, 0.8])  # the step into block 5 of 0..5
    assert spans[(gray, "ViT-ish")] == pytest.approx([0.0, 0.5, 0.5, 0.0, 0.0])
    assert spans[(blue, "ResNet-ish")] == pytest.approx([0.2, 0.4, 0.4, 0.2, 0.2])
    assert set(spans) == {(gray, "ResNet-ish"), (gray, "ViT-ish"), (blue, "ResNet-ish")}
    low, high = fig.layout.yaxis.range
    assert low < -5 and high > 60


def test_lesion_figure_of_an_engine_result(models, data):
    from engine.analyses.lesion import LesionAccuracy  # being written alongside; the JSON shape is what matters here

    _, x, labels = data
    result = LesionAccuracy(models["AlterNet"]).attribute(x, labels).to_json()
    fig = paper_plots.lesion_figure({"AlterNet": result})
    rendered(fig)
    (line,) = (t for t in fig.data if t.mode == "lines+markers")
    assert list(line.x) == [u["normalized_depth"] for u in result["units"]]
    assert list(line.y) == pytest.approx([100 * u["drop"] for u in result["units"]])
    blue = next(t for t in fig.data if t.fillcolor == paper_plots.SHADES["pool"][0])
    assert [x for x in blue.x if x is not None][::5] == pytest.approx([0.2, 0.4, 0.6])  # blocks 2, 3, 4 subsample


def test_hessian_histograms_are_the_eigenvalues_negative_ones_included(models, data):
    _, x, labels = data
    saddle = LoadedModel(
        engine.get_spec("alternet"), Saddle([8.0, -2.0, 1.0]).eval(), "saddle", torch.device("cpu"), cifar_transform()
    )
    flat = (
        HessianSpectrum(saddle, top_k=3, augmented=False, max_iter=50)
        .attribute(torch.zeros(16, 3, 32, 32), [0] * 16)
        .to_json()
    )
    spectrum = HessianSpectrum(models["AlterNet"], top_k=2, batch_size=4, batches=2, max_iter=8)
    tiny = spectrum.attribute(x, labels).to_json()
    fig = paper_plots.hessian_figure({"Saddle": flat, "AlterNet": tiny})
    rendered(fig)
    for trace, result in zip(fig.data, (flat, tiny)):
        assert list(trace.x) == [v for batch in result["eigenvalues"] for v in batch]
    assert min(fig.data[0].x) == pytest.approx(-4, abs=1e-2)  # negative eigenvalues are plotted
    assert fig.data[0].name == f"Saddle · NEP (negative share) 66.7% · APE (mean positive) {flat['ape']:.3g}"
    low, high = fig.layout.xaxis.range
    assert low < min(fig.data[0].x) and high > max(max(t.x) for t in fig.data) and low == -high
    bins = fig.data[0].xbins
    assert bins.start == -bins.end and -bins.start / bins.size == pytest.approx(21)
    assert fig.layout.yaxis.type == "log" and fig.layout.barmode == "overlay"


def test_landscape_lines_and_contours_are_the_loss(models, data):
    _, x, labels = data
    one, two = (
        {
            name: LossLandscape(m, dims=dims, points=3, seed=1).attribute(x, labels).to_json()
            for name, m in models.items()
        }
        for dims in (1, 2)
    )
    lines = paper_plots.landscape_figure(one)
    rendered(lines)
    for trace, result in zip(lines.data, one.values()):
        assert list(trace.x) == result["x"] and list(trace.y) == result["loss"]
    contours = paper_plots.landscape_figure(two)
    out = rendered(contours)
    surfaces = [t for t in contours.data if t.type == "contour"]
    assert [t.xaxis for t in surfaces] == ["x", "x2"]
    for trace, result in zip(surfaces, two.values()):  # colours by decade, the loss itself in the hover
        np.testing.assert_allclose(trace.z, np.log10(result["loss"]))
        assert [list(row) for row in trace.customdata] == result["loss"] and list(trace.y) == result["y"]
    every = [v for result in two.values() for row in result["loss"] for v in row]
    np.testing.assert_allclose(
        [out["layout"]["coloraxis"]["cmin"], out["layout"]["coloraxis"]["cmax"]], np.log10([min(every), max(every)])
    )
    with pytest.raises(ValueError):
        paper_plots.landscape_figure({"1-D": one["ViT"], "2-D": two["ViT"]})


def test_the_1d_slice_of_a_2d_landscape_is_the_1d_landscape(models, data):
    _, x, labels = data
    for model in models.values():
        one, two = (LossLandscape(model, dims=dims, points=5, seed=1).attribute(x, labels).to_json() for dims in (1, 2))
        sliced = along_d1(two)
        assert sliced["x"] == one["x"] and sliced["y"] is None
        np.testing.assert_allclose(sliced["loss"], one["loss"], rtol=1e-6)
        np.testing.assert_allclose(sliced["accuracy"], one["accuracy"])


def test_corruption_scatter_severity_lines_and_detail_bars(models, data):
    images, _, _ = data
    results = {}
    for name, m in models.items():
        with torch.no_grad():  # each random model's own clean predictions, so corruptions change accuracy
            labels = m.module(torch.stack([m.transform(image) for image in map(engine.load_image, images)])).argmax(-1)
        results[name] = (
            CorruptionRobustness(m, ["gaussian_noise", "contrast"], [1, 5]).attribute(images, labels.tolist()).to_json()
        )
    fig = paper_plots.corruption_figure(results)
    rendered(fig)
    points = [t for t in fig.data if t.mode == "markers+text"]
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    for point, line, result in zip(points, lines, results.values()):
        assert point.x[0] == pytest.approx(100 * result["clean_accuracy"])
        assert point.y[0] == pytest.approx(100 * result["mean_accuracy"])
        assert list(line.x) == [0, 1, 5]
        assert list(line.y) == pytest.approx(
            [100 * result["clean_accuracy"]] + [100 * a for a in result["accuracy_by_severity"]]
        )
    detail = paper_plots.corruption_detail_figure(results["ViT"], "ViT")
    rendered(detail)
    bars = detail.data[0]
    assert list(bars.y) == ["gaussian noise", "contrast"]
    assert list(bars.x) == pytest.approx([100 * a for a in results["ViT"]["accuracy_by_corruption"].values()])
    assert detail.layout.shapes[0].x0 == pytest.approx(100 * results["ViT"]["clean_accuracy"])


def test_trajectory_is_polar_with_the_epochs_in_the_hover():
    trajectories = {
        "ViT": {"epochs": [0, 10, 20], "r": [1.0, 0.5, 0.0], "theta_deg": [0.0, 30.0, 45.0]},
        "ResNet": {"epochs": [0, 10, 20], "r": [1.0, 0.7, 0.1], "theta_deg": [0.0, 60.0, 80.0]},
    }
    fig = paper_plots.trajectory_figure(trajectories)
    rendered(fig)
    assert [t.type for t in fig.data] == ["scatterpolar", "scatterpolar"]
    assert list(fig.data[1].r) == [1.0, 0.7, 0.1] and list(fig.data[1].theta) == [0.0, 60.0, 80.0]
    assert list(fig.data[0].customdata) == [0, 10, 20] and "epoch %{customdata}" in fig.data[0].hovertemplate
    assert list(fig.layout.polar.sector) == [0, 90]
    wide = paper_plots.trajectory_figure({"odd": {"epochs": [0, 1], "r": [1.0, 0.5], "theta_deg": [0.0, 121.0]}})
    assert list(wide.layout.polar.sector) == [0, 135]


def test_fig12b_point_labels_do_not_cover_each_other():
    """Labels of crowded points (the stored Fig 12b's) go to different sides; lone points keep theirs on top."""
    points = [
        (58.5, 46.8),
        (54.5, 45.0),
        (58.5, 46.5),
        (64.0, 46.1),
        (59.5, 45.3),
        (55.5, 45.6),
        (59.5, 42.9),
        (51.5, 43.6),
    ]
    labels = ["ResNet (step 0)", *[f"AlterNet step {n}" for n in range(1, 7)], "ViT"]
    results = {
        label: {
            "clean_accuracy": x / 100,
            "mean_accuracy": y / 100,
            "severities": [1],
            "accuracy_by_severity": [y / 100],
        }
        for label, (x, y) in zip(labels, points)
    }
    spots = [
        trace.textposition for trace in paper_plots.corruption_figure(results).data if trace.mode == "markers+text"
    ]
    assert len(spots) == 8 and spots[0] != spots[2]  # ResNet and step 2 sit 0.3 points apart
    far = paper_plots.label_spots([(0, 0), (10, 10)], ["a", "b"], ([-2, 12], [-2, 12]))
    assert [spot.position for spot in far] == ["top center", "top center"]
    stacked = paper_plots.label_spots([(5, 5)] * 8, [f"label {n}" for n in range(8)], ([0, 10], [0, 10]))
    drawn = [spot.position for spot in stacked if spot.position]
    assert len(drawn) == 4 and len(set(drawn)) == 4  # one per side, then no room: any leader crosses a marker
    assert all(spot.offset is None for spot in stacked)
    # a tight cluster, 10-14 px apart: the two middle points' labels go out on leader lines
    cluster = [(5, 5), (5.4, 5), (5, 5.5), (5.4, 5.5), (5.8, 5.25)]
    spots = paper_plots.label_spots(cluster, [f"label {n}" for n in range(5)], ([0, 10], [0, 10]))
    assert all((spot.position is None) != (spot.offset is None) for spot in spots)  # each named, in one way
    assert [spot.position for spot in spots if spot.offset is None] == ["bottom center", "top center", "middle right"]
    assert all(33.99 <= np.hypot(*spot.offset) <= 98.01 for spot in spots if spot.offset)
    edge = paper_plots.label_spots([(10, 5)], ["a long label"], ([0, 10], [0, 10]))
    assert [spot.position for spot in edge] == ["middle left"]  # centred or right, it would cross the edge
    # 40 px apart, a's label above it would clear b's marker but sit 14 px from it and 15 px from a's own
    near = paper_plots.label_spots([(5, 5), (5, 6.16)], ["a", "b"], ([0, 10], [0, 10]))
    assert [spot.position for spot in near] == ["bottom center", "top center"]
    assert [paper_plots.point_label(n) for n in ("ResNet (step 0)", "AlterNet step 6", "ViT")] == [
        "ResNet",
        "step 6",
        "ViT",
    ]


def test_stored_fig12b_labels_sit_nearest_their_own_points():
    """On the stored Fig 12b (the bundled family), every drawn label's centre is nearer its own marker than any
    other, in the pixels label_spots judges by, so no label reads as another point's."""
    runs = json.loads(STORE.read_text())["findings"]["corruption"]["models"].values()
    fig = paper_plots.corruption_figure({run["label"]: run["result"] for run in runs})
    scatter = [trace for trace in fig.data if trace.mode == "markers+text"]
    ranges = fig.layout.xaxis.range, fig.layout.yaxis.range
    markers = np.array([_to_px(t.x[0], t.y[0], *ranges) for t in scatter])
    labelled = [(i, t) for i, t in enumerate(scatter) if t.text[0]]
    for i, trace in labelled:
        vertical, horizontal = trace.textposition.split()
        half_width = 7 * len(trace.text[0]) / 2
        shift = (
            {"center": 0, "right": 8 + half_width, "left": -8 - half_width}[horizontal],
            {"middle": 0, "top": 8 + 7, "bottom": -8 - 7}[vertical],
        )
        distances = np.hypot(*(markers[i] + shift - markers).T)
        assert distances.argmin() == i, (trace.text[0], trace.textposition)
    leaders = [a for a in fig.layout.annotations if a.showarrow]
    assert len(labelled) + len(leaders) == len(scatter)  # every point named on the plot, beside it or on a leader
    assert {a.text for a in leaders}.isdisjoint(t.text[0] for _, t in labelled)
    for a in leaders:  # each leader starts at its own point and leaves it by 34-98 px
        own = next(t for t in scatter if paper_plots.point_label(t.name) == a.text)
        assert (a.x, a.y) == (own.x[0], own.y[0]) and 33.99 <= np.hypot(a.ax, a.ay) <= 98.01
    segments = [(_to_px(a.x, a.y, *ranges), _to_px(a.x, a.y, *ranges) + [a.ax, -a.ay]) for a in leaders]
    for n, one in enumerate(segments):
        assert not any(_cross(one, other) for other in segments[n + 1 :]), leaders[n].text


def _to_px(x: float, y: float, xrange: list, yrange: list) -> np.ndarray:
    """A data point in the 340 x 250 px frame the labels are placed in (y up)."""
    return np.array([(x - xrange[0]) / (xrange[1] - xrange[0]) * 340, (y - yrange[0]) / (yrange[1] - yrange[0]) * 250])


def _cross(one: tuple[np.ndarray, np.ndarray], other: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether two segments cross between their ends: s (b - a) - t (d - c) = c - a with 0 < s, t < 1."""
    (a, b), (c, d) = one, other
    matrix = np.column_stack([b - a, c - d])
    if abs(np.linalg.det(matrix)) < 1e-9:
        return False  # parallel
    s, t = np.linalg.solve(matrix, c - a)
    return 0 < s < 1 and 0 < t < 1


def test_the_stored_figures_colour_each_family_as_the_other_tabs_do():
    """A ResNet blue, a ViT red and an AlterNet green in the Paper figures tab (and the handout's Figs 2b, 12a), as
    in the Compare and AlterNet tabs; Fig 12b's seven build-up steps keep their order of colours."""
    from app.exports.paper_findings import figures, stored
    from app.views.figures import MODEL_COLORS, family_named, places_of

    for name in ("noise", "hessian", "corruption"):
        section = stored()["findings"][name]
        fig = figures(name, section)[0]
        families = [family_named(run["model"]) for run in section["models"].values()]
        colors = {t.name: (t.line.color if t.type == "scatter" else t.marker.color) for t in fig.data if t.name}
        for family, run in zip(families, section["models"].values()):
            shown = next(color for trace, color in colors.items() if trace.startswith(run["label"]))
            if len(set(families)) == len(families):
                assert shown == MODEL_COLORS[places_of([family])[0]], (name, run["label"], shown)
        if name == "noise":
            assert families == ["resnet", "alternet", "vit"] and places_of(families) == [0, 2, 1]
