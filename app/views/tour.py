"""The guided tour's own pictures: the patch grid over the photo, the attention distance by depth, and the
family's test accuracy along AlterNet's build-up (Fig 12a's steps, every bundled seed, from engine.paper.buildup)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from PIL import Image, ImageDraw, ImageFont

from app.backend.cifar_lab import STEPS
from app.views.figures import MODEL_COLORS, layout, model_name, model_places, model_style
from engine.analyses.faithfulness import Faithfulness
from engine.paper.buildup import Run
from engine.results import ModelResult

GRID_COLOR = np.array([255, 255, 255], dtype=np.uint8)
SHOW = 448
LABEL_PX = 20  # the height of a map label's text


def patch_grid(image: np.ndarray, patch: int) -> np.ndarray:
    """`image` (H, W, 3) as a model saw it, enlarged to SHOW pixels, with the lines between its patches."""
    size = image.shape[0]
    shown = np.asarray(Image.fromarray(image).resize((SHOW, SHOW), Image.NEAREST)).copy()
    for k in range(0, size + 1, patch):
        at = min(round(k * SHOW / size), SHOW - 1)
        shown[at, :] = GRID_COLOR
        shown[:, at] = GRID_COLOR
    return shown


def labelled_row(images: list[np.ndarray], labels: list[str]) -> np.ndarray:
    """The images side by side, each under a white band with its label."""
    font = ImageFont.load_default(size=LABEL_PX)
    tiles = []
    for image, label in zip(images, labels):
        tile = Image.new("RGB", (image.shape[1], image.shape[0] + LABEL_PX * 2), "white")
        tile.paste(Image.fromarray(image), (0, LABEL_PX * 2))
        ImageDraw.Draw(tile).text((8, LABEL_PX // 2), label, fill="black", font=font)
        tiles.append(np.asarray(tile))
    return np.concatenate(tiles, axis=1)


def distance_figure(results: list[ModelResult]) -> go.Figure:
    """The mean attention distance (head mean) of every layer, per global-attention model, against
    normalized depth (Fig 5's reading, after Raghu et al.)."""
    fig = go.Figure()
    for place, result in zip(model_places(results), results):
        attention = result.attention
        if attention is None or attention.kind != "global" or not attention.layers:
            continue
        last = max(len(attention.layers) - 1, 1)
        fig.add_scatter(
            x=[i / last for i in range(len(attention.layers))],
            y=[float(np.mean(layer.mean_distance)) for layer in attention.layers],
            mode="lines+markers",
            name=model_name(result),
            **model_style(place),
            hovertemplate=f"{result.label}<br>layer depth %{{x:.2f}}: %{{y:.1f}} px<extra></extra>",
        )
        if even := attention.layers[-1].even_distance:  # the reading's yardstick: attention spread evenly
            fig.add_scatter(
                x=[0, 1],
                y=[even, even],
                mode="lines",
                name=f"{model_name(result)}: attention spread evenly",
                line={"color": MODEL_COLORS[place % len(MODEL_COLORS)], "width": 1, "dash": "dot"},
                hovertemplate=f"{result.label}: attention spread evenly over the patches, %{{y:.1f}} px<extra></extra>",
            )
    layout(fig, "Mean attention distance by layer (head mean)", "Normalized depth (layers)", "Distance (px)")
    return fig.update_xaxes(range=(0, 1))


def buildup_points(runs: dict[int, list[Run]]) -> tuple[dict[int, tuple[float, float]], dict[int, list[float]]]:
    """From every step's bundled runs (engine.paper.buildup): step -> (mean test accuracy over its seeds, epochs), and
    step -> each seed's accuracy for the steps with more than one seed."""
    accuracy = {n: (float(np.mean([r.accuracy for r in rs])), rs[0].epochs) for n, rs in runs.items()}
    return accuracy, {n: [r.accuracy for r in rs] for n, rs in runs.items() if len(rs) > 1}


def buildup_figure(accuracy: dict[int, tuple[float, float]], seeds: dict[int, list[float]] | None = None) -> go.Figure:
    """Test accuracy per build-up step (step 0 the ResNet, step 6 the paper's AlterNet), one line per
    training length (solid with filled squares the longest, dotted and hollow the shorter): the family is
    retrained one member at a time, and only equal runs compare. A line joins neighbouring steps only, never
    across a step trained for another length. Where a step has several seeds (`seeds`), its point is their mean
    and each run is drawn as a small dot beside it."""
    fig = go.Figure()
    if seeds:
        x = [n for n, runs in seeds.items() for _ in runs]
        fig.add_scatter(
            x=x,
            y=[100 * a for runs in seeds.values() for a in runs],
            mode="markers",
            name="each seed (the line: their mean)",
            marker={"color": MODEL_COLORS[2], "size": 6, "symbol": "circle-open"},
            hovertemplate="step %{x}: %{y:.2f}% (one seed)<extra></extra>",
        )
    for slot, epochs in enumerate(sorted({e for _, e in accuracy.values()}, reverse=True)):
        steps = {n: a for n, (a, e) in accuracy.items() if e == epochs}
        x = list(range(min(steps), max(steps) + 1))
        fig.add_scatter(
            x=x,
            y=[100 * steps[n] if n in steps else None for n in x],
            mode="lines+markers+text",
            connectgaps=False,
            name=f"{epochs:g} epochs",
            line={"color": MODEL_COLORS[2], "width": 2, "dash": "solid" if slot == 0 else "dot"},
            marker={"symbol": "square" if slot == 0 else "square-open", "size": 8},
            opacity=1.0 if slot == 0 else 0.6,
            text=[f"{100 * steps[n]:.1f}%" if n in steps else "" for n in x],
            textposition="top center",
            hovertemplate=f"step %{{x}}: %{{y:.1f}}% ({epochs:g} epochs)<extra></extra>",
        )
    layout(
        fig,
        "AlterNet build-up (Fig 12a): CIFAR-10 test accuracy of the bundled checkpoints",
        "Build-up step (0: PreAct ResNet, 6: the paper's AlterNet)",
        "Accuracy (%)",
    )
    if values := [100 * a for a, _ in accuracy.values()] + [100 * a for runs in (seeds or {}).values() for a in runs]:
        pad = max(0.5, 0.15 * (max(values) - min(values)))  # room for the labels above the top point
        fig.update_yaxes(range=[min(values) - pad, max(values) + 2 * pad])
    fig.update_layout(showlegend=True)  # names the training length even when there is one
    return fig.update_xaxes(range=[-0.5, len(STEPS) - 0.5], dtick=1)


def trust_figure(results: list[ModelResult], checks: list[Faithfulness]) -> go.Figure:
    """Each model's deletion curve of its map on the photo (solid) beside random pixel orders' (dotted): the class's
    probability as the pixels go, most important first; a map of what the model uses falls below random."""
    fig = go.Figure()
    for place, result, found in zip(model_places(results), results, checks):
        name = f"{model_name(result)} · {found.method}"
        fig.add_scatter(
            x=[100 * f for f in found.deletion.fractions],
            y=found.deletion.probabilities,
            mode="lines+markers",
            name=f"{name} (area {found.deletion.area:.2f})",
            **model_style(place),
            hovertemplate=f"{name}<br>%{{x:.0f}}% removed: p = %{{y:.3f}}<extra></extra>",
        )
        fig.add_scatter(
            x=[100 * f for f in found.random.deletion.fractions],
            y=found.random.deletion.probabilities,
            mode="lines",
            name=f"{model_name(result)}, random order (area {found.random.deletion.area:.2f})",
            line={"color": MODEL_COLORS[place % len(MODEL_COLORS)], "width": 1.5, "dash": "dot"},
            hovertemplate=f"{model_name(result)}, random order<br>%{{x:.0f}}% removed: p = %{{y:.3f}}<extra></extra>",
        )
    fill = checks[0].random.fill if checks else "blur"
    layout(fig, "Deletion: each map's top pixels removed first", f"Pixels removed (%), {fill} fill", "p(its class)")
    return fig.update_yaxes(range=[0, 1.02])
