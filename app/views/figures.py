"""Plotly figures of the paper's measurements, shared by every front end.

Fig 2a: Δ log amplitude against frequency, one curve per block, coloured by depth (one model).
Fig 8: high-frequency (1.0π) Δ log amplitude against normalized depth (models overlaid).
Fig 9: feature-map variance against normalized depth (models overlaid).
In Fig 8/9 the step into an MSA block is shaded gray and into a subsampling block blue, as in the
paper; each model's shading belongs to its legend entry, so clicking the entry hides both.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import get_colorscale, sample_colorscale

from app.backend.units import lesion_of
from app.views import evidence
from app.views.alt_text import described
from engine.analyses.faithfulness import Faithfulness
from engine.analyses.logit_lens import LogitLensResult
from engine.errors import EngineError
from engine.models.registry import get_spec
from engine.results import ModelResult

# Okabe & Ito's colour-blind-safe palette: blue (ResNet), vermillion (ViT), bluish green (AlterNet), reddish purple,
# the paper's blue, red and green as they stay apart under deuteranopia, protanopia and tritanopia
# (tests/test_figure_axes.py); with a marker and a dash of its own per place, a model is told apart without colour
MODEL_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")
MSA_RING = {"symbol": "circle-open", "size": 15}  # around each MSA unit's marker, on every model's line
MSA_RING_NAME = "○ MSA unit"
MODEL_MARKERS = ("diamond", "circle", "square", "triangle-up")
MODEL_DASHES = ("solid", "dash", "dot", "dashdot")
FAMILY_PLACES = {"resnet": 0, "vit": 1, "alternet": 2}  # a family's colour and marker wherever it is drawn
SHADES = {  # kind: (fill, legend label)
    "msa": ("rgba(128, 128, 128, 0.16)", "MSA block (gray)"),
    "pool": ("rgba(86, 180, 233, 0.22)", "subsampling (blue)"),
}
DEPTH_SCALE = "Plasma"
DEPTH_COLORS = get_colorscale(DEPTH_SCALE)  # looked up once: by name, each sample read every scale plotly has
HEIGHT = 380
TITLE_CHARS = 36  # a title line that fits a column a quarter of a laptop screen wide (14 px type), or a phone

# Every figure's template, which plotly gives each new figure: named on a figure, a template is validated again
# (about 40 ms a figure, most of the time a compare page's figures took to make); as the default, once. Streamlit
# sets its own default when it is imported: `layout` sets ours back (and on the figure in hand) if so.
TEMPLATE = "plotly_white"
pio.templates.default = TEMPLATE


def model_name(result: ModelResult) -> str:
    """The model's label, saying so when its weights are random."""
    return f"{result.label} (random weights)" if result.random_weights else result.label


def model_style(slot: int) -> dict:
    """The line (colour and dash) and markers of the model in position `slot`, the same in every figure."""
    return {
        "line": {"color": MODEL_COLORS[slot % len(MODEL_COLORS)], "width": 2, "dash": MODEL_DASHES[slot % 4]},
        "marker": {"symbol": MODEL_MARKERS[slot % len(MODEL_MARKERS)], "size": 7},
    }


def family_named(name: str | None) -> str | None:
    """The family of registered model `name` ('resnet', 'vit', 'alternet', ...), None when unknown."""
    try:
        return get_spec(name).family if name else None
    except (EngineError, ValueError):
        return None


def model_places(results: list[ModelResult]) -> list[int]:
    """Each model's colour and marker (its place in MODEL_COLORS and MODEL_MARKERS), decided here for every
    figure of every tab (places_of)."""
    return places_of([family_named(result.name) for result in results])


def places_of(families: list[str | None]) -> list[int]:
    """By family (a ResNet blue, a ViT vermillion, an AlterNet bluish green: the paper's blue, red and green), so
    that a model keeps its colour whatever its position; a second model of a family, or another family, takes the
    first place still free."""
    places: list[int] = []
    for family in families:
        wanted = FAMILY_PLACES.get(family)
        if wanted is None or wanted in places:
            free = [p for p in range(len(MODEL_COLORS)) if p not in places]
            wanted = free[0] if free else len(places)
        places.append(wanted)
    return places


def layout(
    fig: go.Figure,
    title: str,
    x_title: str | None = "",
    y_title: str = "",
    height: int = HEIGHT,
    x_range: tuple[float, float] | None = None,
) -> go.Figure:
    """The app's look: small left title, framed axes (none when `x_title` is None, for a polar plot), legend below
    the plot, plotly's toolbar upright at the right (over no title, even on a phone); the white template is plotly's
    default (TEMPLATE)."""
    if pio.templates.default != TEMPLATE:  # another library set its own since
        pio.templates.default = TEMPLATE
        fig.update_layout(template=TEMPLATE)
    fig.update_layout(
        title={"text": title, "x": 0.01, "font": {"size": 14}},
        height=height,
        margin={"l": 60, "r": 40, "t": 48, "b": 48},
        modebar={"orientation": "v"},  # plotly's toolbar upright in the right margin, clear of the title
        hoverlabel={"namelength": -1},
        # at the foot of the figure, whatever its size: the margin grows to hold it, clear of the x-axis title
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0, "x": 0},
    )
    if x_title is not None:
        fig.update_xaxes(title=x_title, range=x_range, showline=True, linecolor="#888", mirror=True)
        fig.update_yaxes(title=y_title, showline=True, linecolor="#888", mirror=True)
    return fig


def fourier_spectrum(result: ModelResult) -> go.Figure:
    """Fig 2a: each block's Δ log amplitude from 0.0π to 1.0π, shallow (dark) to deep (yellow)."""
    fig = go.Figure()
    for block in reversed(result.blocks):  # deep first, so shallow curves are drawn on top
        freq = np.linspace(0, 1, len(block.fourier))
        fig.add_scatter(
            x=freq,
            y=block.fourier,
            mode="lines",
            line={"color": sample_colorscale(DEPTH_COLORS, block.normalized_depth)[0], "width": 1.6},
            name=f"{block.index}: {block.name}",
            hovertemplate=f"{block.name} ({block.kind}), depth {block.normalized_depth:.2f}"
            "<br>%{x:.2f}π: Δ log amplitude %{y:.3f}<extra></extra>",
            showlegend=False,
        )
    fig.add_scatter(  # carries the colorbar only
        x=[None],
        y=[None],
        mode="markers",
        marker={
            "color": [0, 1],
            "colorscale": DEPTH_SCALE,
            "showscale": True,
            "colorbar": {"title": {"text": "Normalized depth", "side": "right"}, "thickness": 12},
        },
        hoverinfo="skip",
        showlegend=False,
    )
    title = f"Fig 2a · {model_name(result)}"
    if len(title) > TITLE_CHARS:  # a long label (four columns are narrow): the model, then its weights, below
        title = f"Fig 2a<br>{result.label}" + "<br>(random weights)" * result.random_weights
    layout(fig, title, "Frequency", "Δ Log amplitude", x_range=(0, 1))
    fig.update_layout(margin={"t": 30 + 18 * (title.count("<br>") + 1)})
    fig.update_xaxes(tickvals=np.linspace(0, 1, 6), ticktext=[f"{v:.1f}π" for v in np.linspace(0, 1, 6)])
    return described(fig)


def _y_range(values: list[float], log_y: bool) -> list[float]:
    """The data's range padded by 6% (in log10 units on a log axis), as plotly's `range` wants it."""
    data = np.log10([v for v in values if v > 0]) if log_y else np.asarray(values)
    low, high = float(data.min()), float(data.max())
    pad = 0.06 * (high - low or 1.0)
    return [low - pad, high + pad]


def _spans(result: ModelResult, kind: str, y_range: list[float], log_y: bool, group: str) -> go.Scatter | None:
    """One trace of rectangles [(i - 1)/(L - 1), i/(L - 1)] for each block i of `kind`, filling the plot's
    height; a trace rather than layout shapes so that the model's legend entry hides it too."""
    last = max(len(result.blocks) - 1, 1)
    low, high = (10**y for y in y_range) if log_y else y_range
    return spans([b.index for b in result.blocks if b.kind == kind], 1 / last, kind, (low, high), group)


def spans(indices: list[int], step: float, kind: str, y_range: tuple[float, float], group: str) -> go.Scatter | None:
    """Rectangles over the depth step into each block of `indices` ([(i - 1) * step, i * step], the stem
    excluded), filling `y_range` with `kind`'s shade; None when there are none."""
    low, high = y_range
    xs, ys = [], []
    for index in (i for i in indices if i > 0):
        x0, x1 = (index - 1) * step, index * step
        xs += [x0, x1, x1, x0, x0, None]
        ys += [low, low, high, high, low, None]
    if not xs:
        return None
    return go.Scatter(
        x=xs,
        y=ys,
        fill="toself",
        fillcolor=SHADES[kind][0],
        mode="none",
        hoverinfo="skip",
        legendgroup=group,
        showlegend=False,
    )


def _shade(
    fig: go.Figure, results: list[ModelResult], shaded: int | None, y_range: list[float], log_y: bool
) -> list[str]:
    """The MSA and subsampling spans of model `shaded` (its position; None: no model's), with a legend key
    naming it; the legend groups of every model, so that a model's entry hides its spans too."""
    groups = [f"{slot}:{result.name}" for slot, result in enumerate(results)]
    chosen = [] if shaded is None or not 0 <= shaded < len(results) else [shaded]
    # the model by its short name ('PreAct ResNet'), so that the key fits a phone's legend
    whose = f", {lesion_of(results[chosen[0]].label)[0].split(' (')[0]}" if chosen and len(results) > 1 else ""
    for kind, (color, label) in SHADES.items():
        traces = [_spans(results[i], kind, y_range, log_y, groups[i]) for i in chosen]
        fig.add_traces([trace for trace in traces if trace is not None])
        if any(traces):
            fig.add_scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=label.replace(")", f"{whose})") if whose else label,
                hoverinfo="skip",
                legendrank=1001,
                marker={"symbol": "square", "size": 14, "color": color.replace("0.16", "0.4")},
            )
    return groups


def msa_model(results: list[ModelResult]) -> int:
    """The model Figs 8 and 9 shade unless another is chosen, so that the gray spans the text points at are there:
    the AlterNet, else the first model with MSA blocks (a ViT), else the first."""
    alternet = [i for i, result in enumerate(results) if result.name == "alternet"]
    with_msa = [i for i, result in enumerate(results) if any(block.kind == "msa" for block in result.blocks)]
    return (alternet or with_msa or [0])[0]


def _ring_msa_units(fig: go.Figure, results: list[ModelResult], groups: list[str], values) -> None:
    """A ring of the model's colour around each of its MSA units, on every model's line (shaded or not), in the
    model's legend group; one legend key for the rings."""
    ringed = False
    for result, group, place in zip(results, groups, model_places(results)):
        msa = [block for block in result.blocks if block.kind == "msa"]
        if not msa:
            continue
        fig.add_scatter(
            x=[block.normalized_depth for block in msa],
            y=[values(block) for block in msa],
            mode="markers",
            cliponaxis=False,
            legendgroup=group,
            showlegend=False,
            hoverinfo="skip",
            marker={**MSA_RING, "line": {"width": 2, "color": MODEL_COLORS[place % len(MODEL_COLORS)]}},
        )
        ringed = True
    if ringed:
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=MSA_RING_NAME,
            hoverinfo="skip",
            legendrank=1002,
            marker={**MSA_RING, "line": {"width": 2, "color": "#444444"}},
        )


def _by_depth(
    results: list[ModelResult],
    values,
    title: str,
    y_title: str,
    y_format: str,
    log_y: bool = False,
    shaded: int | None = 0,
) -> go.Figure:
    """Models overlaid by depth; the MSA and subsampling blocks of model `shaded` (its position; None: no
    model's) shaded, since several models' spans together would shade the whole axis."""
    fig = go.Figure()
    y_range = _y_range([values(block) for result in results for block in result.blocks], log_y)
    groups = _shade(fig, results, shaded, y_range, log_y)
    for result, group, place in zip(results, groups, model_places(results)):
        fig.add_scatter(
            x=[block.normalized_depth for block in result.blocks],
            y=[values(block) for block in result.blocks],
            customdata=[[block.name, block.kind] for block in result.blocks],
            mode="lines+markers",
            cliponaxis=False,
            name=model_name(result),
            legendgroup=group,
            **model_style(place),
            hovertemplate=f"{result.label}<br>%{{customdata[0]}} (%{{customdata[1]}})"
            f"<br>depth %{{x:.2f}}<br>{y_title} %{{y:{y_format}}}<extra></extra>",
        )
    _ring_msa_units(fig, results, groups, values)
    layout(fig, title, "Normalized depth", y_title, x_range=(0, 1))
    fig.update_yaxes(type="log" if log_y else "linear", range=y_range)
    decades = y_range[1] - y_range[0]
    if log_y and decades < 1:  # under a decade plotly labels ticks 2, 3, ... 9: give values
        fig.update_yaxes(tickformat=".3~g")
    elif log_y:  # over a decade, label 1, 2 and 5 of each decade (under 3 decades) or the powers of ten
        steps = (1, 2, 5) if decades < 3 else (1,)
        ticks = [
            k * 10.0**e
            for e in range(math.floor(y_range[0]), math.ceil(y_range[1]) + 1)
            for k in steps
            if y_range[0] <= math.log10(k * 10.0**e) <= y_range[1]
        ]
        fig.update_yaxes(tickvals=ticks, ticktext=[f"{t:.3g}" for t in ticks])
    return fig


def high_frequency(results: list[ModelResult], shaded: int | None = 0) -> go.Figure:
    """Fig 8: Δ log amplitude at 1.0π per block against normalized depth."""
    title = "Fig 8 · high-frequency Δ log amplitude (1.0π)"
    fig = _by_depth(results, lambda b: b.high_freq, title, "Δ log amplitude", ".3f", shaded=shaded)
    return described(fig, evidence.high_frequency_here(results))


def variance(results: list[ModelResult], log_y: bool = True, shaded: int | None = 0) -> go.Figure:
    """Fig 9: feature-map variance per block against normalized depth (log axis by default)."""
    title = "Fig 9 · feature map variance"
    return described(
        _by_depth(results, lambda b: b.variance, title, "Variance", ".3g", log_y, shaded),
        evidence.variance_here(results),
    )


def answer_curve(results: list[ModelResult], lenses: list[LogitLensResult | None], shaded: int | None = 0) -> go.Figure:
    """When the answer appears (logit lens): the probability each model's own norm and head give its final
    class after every block, against normalized depth; blocks the head cannot read are left as gaps."""
    fig = go.Figure()
    groups = _shade(fig, results, shaded, [0.0, 1.02], False)
    for result, lens, group, place in zip(results, lenses, groups, model_places(results)):
        if lens is None:
            continue
        fig.add_scatter(
            x=[b.normalized_depth for b in lens.blocks],
            y=[b.final_probability if b.applies else None for b in lens.blocks],
            customdata=[[b.name, b.kind, b.top5[0].label if b.top5 else "not read"] for b in lens.blocks],
            mode="lines+markers",
            connectgaps=False,
            cliponaxis=False,
            name=model_name(result),
            legendgroup=group,
            **model_style(place),
            hovertemplate=f"{result.label}<br>%{{customdata[0]}} (%{{customdata[1]}})<br>depth %{{x:.2f}}"
            f"<br>p({lens.final_label}) %{{y:.3f}}<br>top-1 here: %{{customdata[2]}}<extra></extra>",
        )
    layout(
        fig,
        "When the answer appears (logit lens)",  # the y axis says what is drawn; a phone shows this whole
        "Normalized depth",
        "p(final class)",
        x_range=(0, 1),
    )
    return described(fig.update_yaxes(range=[0, 1.02]), evidence.lens_here(results, lenses))


def faithfulness_curves(found: Faithfulness, model: str) -> go.Figure:
    """A map's deletion and insertion curves (the class's probability as its pixels go, or come back, most
    important first) beside random orders' (dashed): a faithful map's deletion falls below random's, its insertion
    rises above."""
    fig = go.Figure()
    curves = (
        ("deletion", found.deletion, "solid"),
        ("deletion, random order", found.random.deletion, "dash"),
        ("insertion", found.insertion, "solid"),
        ("insertion, random order", found.random.insertion, "dash"),
    )
    for name, curve, dash in curves:
        place = 1 if name.startswith("deletion") else 0
        fig.add_scatter(
            x=[100 * f for f in curve.fractions],
            y=curve.probabilities,
            mode="lines+markers",
            name=f"{name} (area {curve.area:.2f})",
            line={"color": MODEL_COLORS[place], "dash": dash},
            marker={"symbol": MODEL_MARKERS[place] if dash == "solid" else "x", "size": 6},
            hovertemplate=f"{name}<br>%{{x:.0f}}% of the pixels: p = %{{y:.3f}}<extra></extra>",
        )
    title = f"Deletion and insertion · {found.method}<br>{model}"  # the model on a line of its own: whole in a column
    layout(fig, title, f"Pixels removed or put back (%), {found.random.fill} fill", f"p({found.label})")
    fig.update_layout(margin={"t": 64})
    fig.update_yaxes(range=[0, 1.02])
    return described(fig.update_layout(showlegend=True), found.line())
