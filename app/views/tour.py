"""The guided tour's own pictures: the patch grid over the photo, the attention distance by depth, and the
family's test accuracy along AlterNet's build-up (Fig 12a's steps, from the bundled checkpoints)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from PIL import Image, ImageDraw, ImageFont

from app.cifar_lab import STEPS
from app.views.figures import MODEL_COLORS, layout, model_name, model_style
from engine.checkpoint import CheckpointMeta, read_meta
from engine.models import bundled_path
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
    for slot, result in enumerate(results):
        attention = result.attention
        if attention is None or attention.kind != "global" or not attention.layers:
            continue
        last = max(len(attention.layers) - 1, 1)
        fig.add_scatter(
            x=[i / last for i in range(len(attention.layers))],
            y=[float(np.mean(layer.mean_distance)) for layer in attention.layers],
            mode="lines+markers",
            name=model_name(result),
            **model_style(slot),
            hovertemplate=f"{result.label}<br>layer depth %{{x:.2f}}: %{{y:.1f}} px<extra></extra>",
        )
        if even := attention.layers[-1].even_distance:  # the reading's yardstick: attention spread evenly
            fig.add_scatter(
                x=[0, 1],
                y=[even, even],
                mode="lines",
                name=f"{model_name(result)}: attention spread evenly",
                line={"color": MODEL_COLORS[slot % len(MODEL_COLORS)], "width": 1, "dash": "dot"},
                hovertemplate=f"{result.label}: attention spread evenly over the patches, %{{y:.1f}} px<extra></extra>",
            )
    layout(fig, "Mean attention distance by layer (head mean)", "Normalized depth (layers)", "Distance (px)")
    return fig.update_xaxes(range=(0, 1))


def step_meta(n: int) -> CheckpointMeta | None:
    """The sidecar of build-up step `n`'s bundled checkpoint (step 0 the PreAct ResNet), if there is one."""
    name, options = ("preact_resnet", {}) if n == 0 else ("alternet", {"msa": str(STEPS[n])})
    path = bundled_path(name, options)
    return read_meta(path) if path else None


def buildup_metas() -> dict[int, CheckpointMeta]:
    """Step: the sidecar of its bundled checkpoint, along Fig 12a's build-up (steps without a checkpoint or
    a measured test accuracy are left out)."""
    metas = {n: step_meta(n) for n in range(len(STEPS))}
    return {n: m for n, m in metas.items() if m is not None and m.test_accuracy is not None}


def buildup_accuracy(metas: dict[int, CheckpointMeta] | None = None) -> dict[int, tuple[float, float]]:
    """Step: (CIFAR-10 test accuracy, epochs) of its bundled checkpoint, from `metas` (read when not given)."""
    metas = buildup_metas() if metas is None else metas
    return {n: (m.test_accuracy, m.epochs) for n, m in metas.items()}


def sampling_error(a: float, b: float, images: int) -> float:
    """Half-width in points of the 95% interval of the gap between two accuracies, each measured on
    `images` test images (binomial, normal approximation)."""
    return 100 * 1.96 * math.sqrt((a * (1 - a) + b * (1 - b)) / images)


def buildup_figure(accuracy: dict[int, tuple[float, float]]) -> go.Figure:
    """Test accuracy per build-up step (step 0 the ResNet, step 6 the paper's AlterNet), one line per
    training length (solid with filled squares the longest, dotted and hollow the shorter): the family is
    retrained one member at a time, and only equal runs compare. A line joins neighbouring steps only, never
    across a step trained for another length."""
    fig = go.Figure()
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
    if values := [100 * a for a, _ in accuracy.values()]:
        pad = max(0.5, 0.15 * (max(values) - min(values)))  # room for the labels above the top point
        fig.update_yaxes(range=[min(values) - pad, max(values) + 2 * pad])
    fig.update_layout(showlegend=True)  # names the training length even when there is one
    return fig.update_xaxes(range=[-0.5, len(STEPS) - 0.5], dtick=1)
