"""Figures of the map checks (engine.analyses.map_checks) over the bundled CIFAR-10 test images, drawn from their
`to_json()` dicts keyed by model label (stored or recomputed; no model runs here).

random_order_figure: how much better than random pixel order each method's maps delete and insert, per model,
    with 95% intervals (blur fill).
road_figure: ROAD's test, each method's least- against most-relevant-first (noisy linear imputation).
randomization_figure: one model's maps against its own maps once its weights are randomized from the head down.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.views.figures import layout
from app.views.paper_plots import run_name, run_places, run_style
from engine.paper.map_verdicts import ALIKE, cell, difference, methods
from engine.paper.paired import MeanDifference

PATTERNS = ("", "/", ".", "x", "\\", "+")  # a fill pattern per model, beside its colour
Difference = Callable[[dict, str], MeanDifference | None]  # a model's result and a method: one check's numbers


def _bars(fig: go.Figure, results: dict[str, dict], check: Difference, col: int = 1) -> None:
    """Grouped bars in column `col`: per method, each model's mean per-image difference with its paired bootstrap
    95% interval (a method that does not apply to a model has no bar)."""
    names = methods({"models": {label: {"result": data} for label, data in results.items()}})
    for slot, (label, data) in zip(run_places(results), results.items()):
        shown = [name for name in names if name in data["methods"]]
        found = [check(data, name) for name in shown]
        shown, found = [n for n, f in zip(shown, found) if f], [f for f in found if f]
        name, colour = run_name(label, data), run_style(slot)["line"]["color"]
        fig.add_trace(
            go.Bar(
                x=shown,
                y=[f.mean for f in found],
                name=name,
                legendgroup=label,
                showlegend=col == 1,
                marker={"color": colour, "pattern": {"shape": PATTERNS[slot % len(PATTERNS)]}},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [f.high - f.mean for f in found],
                    "arrayminus": [f.mean - f.low for f in found],
                    "color": "#333",
                },
                hovertemplate=f"{name}<br>%{{x}}: %{{y:+.3f}}<extra></extra>",
            ),
            row=1,
            col=col,
        )


def _images(results: dict[str, dict]) -> int:
    return next(iter(results.values()))["images"] if results else 0


def random_order_figure(results: dict[str, dict]) -> go.Figure:
    """Deletion and insertion against random pixel order (blur fill), side by side: per method and model, the map's
    mean gain over random order on the same images, with 95% intervals; above 0, the map beats random order."""
    titles = ["Deletion: random order's area − the map's", "Insertion: the map's area − random order's"]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, subplot_titles=titles, horizontal_spacing=0.06)
    _bars(fig, results, lambda data, name: cell(data, name).deletion, 1)
    _bars(fig, results, lambda data, name: cell(data, name).insertion, 2)
    fig.add_hline(y=0, line={"color": "#555", "width": 1})
    title = f"Map checks · against random pixel order, blur fill ({_images(results)} test images)"
    layout(fig, title, "", "Gain over random order (area)", height=420)
    fig.update_yaxes(title=None, col=2)  # shared with the first panel's
    return fig.update_layout(barmode="group", margin={"t": 72})


def road_figure(results: dict[str, dict]) -> go.Figure:
    """ROAD's test: per method and model, the area of the curve with the map's least relevant pixels taken away
    first minus the most relevant first (noisy linear imputation), with 95% intervals; above 0, the map's top pixels
    matter more than its bottom ones."""
    fig = make_subplots(rows=1, cols=1)
    _bars(fig, results, lambda data, name: cell(data, name).road)
    fig.add_hline(y=0, line={"color": "#555", "width": 1})
    title = f"Map checks · ROAD: least minus most relevant first, noisy linear imputation ({_images(results)} images)"
    layout(fig, title, "", "Area difference", height=420)
    return fig.update_layout(barmode="group")


def randomization_figure(label: str, data: dict) -> go.Figure:
    """One model: per method, the mean Spearman ρ of its maps on the randomized model with its trained maps, at
    each stage of the cascade from the head down (1 at the trained model), with 95% intervals; the dashed line is
    the verdicts' 'still alike'."""
    stages = ["trained", *data["stages"]]
    fig = go.Figure()
    for slot, name in enumerate(data["methods"]):
        rho = data["methods"][name]["spearman"]
        if not rho or not rho[0]:
            continue
        found = [difference(stage) if len(stage) > 1 else None for stage in rho]
        means = [1.0, *(float(np.mean(stage)) for stage in rho)]
        high = [0.0, *(f.high - f.mean if f else 0.0 for f in found)]
        low = [0.0, *(f.mean - f.low if f else 0.0 for f in found)]
        fig.add_trace(
            go.Scatter(
                x=stages,
                y=means,
                mode="lines+markers",
                name=name,
                error_y={"type": "data", "symmetric": False, "array": high, "arrayminus": low},
                hovertemplate=f"{name}<br>%{{x}}: ρ %{{y:.2f}}<extra></extra>",
                **run_style(slot),
            )
        )
    fig.add_hline(y=ALIKE, line={"color": "#555", "width": 1, "dash": "dash"})
    title = f"Map checks · randomization test, {run_name(label, data)} ({data['randomized']} test images)"
    layout(fig, title, "Weights randomized, from the head down", "Spearman ρ with the trained maps", height=400)
    ticks = [stage.replace("down to ", "down to<br>") for stage in stages]  # two lines: the parts' names are long
    fig.update_xaxes(tickvals=stages, ticktext=ticks)
    return fig.update_yaxes(range=[-0.3, 1.05])
