"""Plotly figures of the paper's other findings, drawn from the engine results' `to_json()` dicts.

Each function takes those dicts (stored or fresh; the engine need not run) keyed by the model's display
label, which gets " (random weights)" added when the dict says its weights are random, as in app.figures.

noise_figure: Fig 2b, accuracy drop against the frequency of the added noise (engine.analyses.noise).
similarity_figure: Fig 10a, the CKA heat map of two models' blocks (engine.analyses.similarity).
lesion_figure: Fig 10b, the accuracy drop when one unit is switched off, by depth (engine.analyses.lesion).
hessian_figure: Figs 1c and 4, the histogram of the top Hessian eigenvalues (engine.analyses.hessian).
landscape_figure: Fig 1a, NLL + ℓ2 along one or two random directions (engine.analyses.landscape).
corruption_figure, corruption_detail_figure: Fig 12b, accuracy under common corruptions (engine.analyses.corruption).
trajectory_figure: Fig 1b, the optimization trajectory (r_t, θ_t) in polar coordinates.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.views.figures import MODEL_COLORS, MODEL_DASHES, MODEL_MARKERS, SHADES, family_named, layout, places_of, spans

COLORS = (*MODEL_COLORS, "#E69F00", "#56B4E9", "#000000", "#6E6E6E")  # Okabe-Ito's others: Fig 12b's whole family
MARKERS = (*MODEL_MARKERS, "cross", "star", "hexagon", "x")
DASHES = (*MODEL_DASHES, "longdash", "longdashdot", "solid", "dash")

PI_TICKS = {"tickvals": np.linspace(0, 1, 6).tolist(), "ticktext": [f"{v:.1f}π" for v in np.linspace(0, 1, 6)]}
LOSS = "NLL + ℓ2"


def run_name(label: str, data: dict) -> str:
    """The display label, saying so when the dict says the weights are random (and the label does not)."""
    random = bool(data.get("random_weights"))
    return f"{label} (random weights)" if random and "random weights" not in label else label


def run_style(slot: int) -> dict:
    """The line and marker of the model in `slot`, as app.figures draws it."""
    return {
        "line": {"color": COLORS[slot % len(COLORS)], "width": 2, "dash": DASHES[slot % len(DASHES)]},
        "marker": {"symbol": MARKERS[slot % len(MARKERS)], "size": 7},
    }


def run_places(results: dict[str, dict]) -> list[int]:
    """Each model's colour and marker: by family as in the other tabs' figures (a ResNet blue, a ViT vermillion, an
    AlterNet bluish green) where each family appears once; in order where one appears several times (Fig 12b's
    steps)."""
    families = [family_named(data.get("model")) for data in results.values()]
    if None in families or len(set(families)) < len(families):
        return list(range(len(families)))
    return places_of(families)


def _line(slot: int, name: str, x: list, y: list, hover: str, **kwargs) -> go.Scatter:
    """One model's line with markers in its colour and marker symbol."""
    return go.Scatter(
        x=x,
        y=y,
        mode="lines+markers",
        name=name,
        hovertemplate=f"{name}<br>{hover}<extra></extra>",
        **run_style(slot),
        **kwargs,
    )


def _key(name: str, color: str) -> go.Scatter:
    """A legend entry without data (a shading's or a marking's key)."""
    return go.Scatter(
        x=[None],
        y=[None],
        mode="markers",
        name=name,
        hoverinfo="skip",
        marker={"symbol": "square", "size": 14, "color": color},
    )


def _percent(values: list[float]) -> list[float]:
    return [100 * v for v in values]


# ---- Fig 2b ----


def _noise_drop(data: dict) -> tuple[list[float], str]:
    """The plotted drop in percentage points and what it is: accuracy, or without labels top-1 probability."""
    if data.get("accuracy_drop") is not None:
        return _percent(data["accuracy_drop"]), "accuracy"
    return _percent(data["probability_drop"]), "top-1 probability"


def noise_figure(results: dict[str, dict]) -> go.Figure:
    """Fig 2b: clean minus noisy accuracy (pp) per noise frequency band, one line per model; the drop of the
    clean top-1 class's probability for a result without labels."""
    fig, measures = go.Figure(), []
    for slot, (label, data) in zip(run_places(results), results.items()):
        drop, measure = _noise_drop(data)
        measures.append(measure)
        name = run_name(label, data) + ("" if measure == "accuracy" else " · top-1 probability")
        fig.add_trace(_line(slot, name, data["frequencies"], drop, f"%{{x:.1f}}π: {measure} drop %{{y:.1f}} pp"))
    fig.add_hline(0, line={"color": "#888", "width": 1})
    y_title = " / ".join(f"{m.capitalize()} drop" for m in dict.fromkeys(measures)) + " (pp)"
    title = "Fig 2b · drop under frequency-based random noise"
    if "accuracy" not in measures:  # the photo panel: one image, one class
        title = (
            "Noise on your photo · drop of each model's top-1 probability<br><sup>one photo, not the paper's "
            "dataset measurement; below 0 the noise raised the probability</sup>"
        )
    layout(fig, title, "Noise frequency", y_title)
    return fig.update_xaxes(range=[-0.03, 1.03], **PI_TICKS)


# ---- Fig 10a ----


def _ticks(labels: list[str], kinds: list[str]) -> dict:
    """Every block's tick, E/P/index as in the JSON, MSA blocks in bold."""
    text = [f"<b>{t}</b>" if kind == "msa" else t for t, kind in zip(labels, kinds)]
    return {"tickvals": list(range(len(labels))), "ticktext": text, "tickfont": {"size": 10}}


def similarity_figure(sim: dict, row_label: str, column_label: str) -> go.Figure:
    """Fig 10a: CKA (0..1) of every row block against every column block, first blocks top left."""
    rows, columns = sim["row_labels"], sim["column_labels"]
    fig = go.Figure(
        go.Heatmap(
            z=sim["cka"],
            x=list(range(len(columns))),
            y=list(range(len(rows))),
            zmin=0,
            zmax=1,
            colorscale="Viridis",
            colorbar={"title": {"text": "CKA", "side": "right"}, "thickness": 12},
            customdata=[[[r, c] for c in columns] for r in rows],
            hovertemplate=f"{row_label} %{{customdata[0]}} · {column_label} %{{customdata[1]}}"
            "<br>CKA %{z:.3f}<extra></extra>",
        )
    )
    fig.add_trace(_key("<b>bold</b> tick: MSA block (E: embedding, P: pooling)", "rgba(0, 0, 0, 0)"))
    images = f", {sim['images']} images" if sim.get("images") else ""
    layout(
        fig,
        f"Fig 10a · {row_label if row_label == column_label else f'{row_label} vs {column_label}'}: "
        f"feature map similarity (CKA){images}",
        f"{column_label} block",
        f"{row_label} block",
        height=420,
    )
    fig.update_layout(showlegend=True, plot_bgcolor="white")
    fig.update_xaxes(constrain="domain", showgrid=False, zeroline=False, **_ticks(columns, sim["column_kinds"]))
    return fig.update_yaxes(
        autorange="reversed",
        scaleanchor="x",
        constrain="domain",
        showgrid=False,
        zeroline=False,
        **_ticks(rows, sim["row_kinds"]),
    )


# ---- Fig 10b ----


def _unit_spans(units: list[dict], kind: str, y_range: list[float], group: str) -> go.Scatter | None:
    """Rectangles over the depth step into each block of `kind`, [(i - 1)/(L - 1), i/(L - 1)] as in Fig 8/9,
    filling `y_range`; a trace so the model's legend entry hides it too. Blocks missing from the units
    (they cannot be switched off) after the stem are subsampling ones."""
    step = next((u["normalized_depth"] / u["index"] for u in units if u["index"] > 0), 0.0)
    kinds = dict.fromkeys(range(1, max((u["index"] for u in units), default=0)), "pool")
    kinds.update({u["index"]: u["kind"] for u in units})
    return spans([i for i, k in kinds.items() if k == kind], step, kind, tuple(y_range), group)


def lesion_figure(results: dict[str, dict]) -> go.Figure:
    """Fig 10b: the accuracy drop (pp) when each unit is switched off, against normalized depth; MSA units
    shaded gray and subsampling blocks blue."""
    fig = go.Figure()
    drops = [100 * u["drop"] for data in results.values() for u in data["units"]]
    low, high = min(drops + [0.0]), max(drops + [0.0])
    y_range = [low - 0.06 * (high - low or 1), high + 0.06 * (high - low or 1)]
    for kind, (color, key) in SHADES.items():
        spans = [_unit_spans(data["units"], kind, y_range, label) for label, data in results.items()]
        fig.add_traces([span for span in spans if span is not None])
        if any(spans):
            fig.add_trace(_key(key, color.replace("0.16", "0.4")))
    for slot, (label, data) in zip(run_places(results), results.items()):
        units = data["units"]
        fig.add_trace(
            _line(
                slot,
                run_name(label, data),
                [u["normalized_depth"] for u in units],
                [100 * u["drop"] for u in units],
                "%{customdata[0]} (%{customdata[1]}) off, depth %{x:.2f}<br>accuracy %{customdata[2]:.1f}%,"
                " drop %{y:.1f} pp",
                customdata=[[u["name"], u["kind"], 100 * u["accuracy"]] for u in units],
                legendgroup=label,
                cliponaxis=False,
            )
        )
    who = f"{next(iter(results))}: " if len(results) == 1 else ""
    layout(fig, f"Fig 10b · {who}accuracy drop with one unit removed", "Normalized depth", "Accuracy drop (pp)")
    fig.update_xaxes(range=[0, 1])
    return fig.update_yaxes(range=y_range)


# ---- Figs 1c and 4 ----


def _eigenvalues(data: dict) -> list[float]:
    return [value for batch in data["eigenvalues"] for value in batch]


def _hessian_name(label: str, data: dict) -> str:
    """The label with NEP (share of negative eigenvalues) and APE (mean positive one) where the JSON has them."""
    parts = [run_name(label, data)]
    if data.get("nep") is not None:
        parts.append(f"NEP (negative share) {100 * data['nep']:.1f}%")
    if data.get("ape") is not None:
        parts.append(f"APE (mean positive) {data['ape']:.3g}")
    return " · ".join(parts)


def hessian_figure(results: dict[str, dict]) -> go.Figure:
    """Figs 1c/4: histograms of every minibatch's top Hessian eigenvalues (signed), models overlaid on the
    same bins, symmetric about zero so negative eigenvalues show left of the dashed zero line; log counts."""
    peak = max((abs(v) for data in results.values() for v in _eigenvalues(data)), default=1.0) or 1.0
    size = peak / 20
    edges = np.arange(-21, 22) * size  # zero is a bin edge
    most = max((np.histogram(_eigenvalues(data), edges)[0].max() for data in results.values()), default=1)
    fig = go.Figure()
    for slot, (label, data) in zip(run_places(results), results.items()):
        fig.add_histogram(
            x=_eigenvalues(data),
            name=_hessian_name(label, data),
            opacity=0.6,
            xbins={"start": edges[0], "end": edges[-1], "size": size},
            marker={"color": COLORS[slot % len(COLORS)]},
            hovertemplate=f"{label}<br>eigenvalue %{{x}}<br>count %{{y}}<extra></extra>",
        )
    fig.add_vline(0, line={"color": "#555", "width": 1, "dash": "dash"})
    layout(
        fig,
        f"Fig 4 · Hessian max eigenvalue spectra ({LOSS}, top eigenvalues per minibatch)",
        "Hessian eigenvalue",
        "Count (log)",
    )
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(range=[edges[0], edges[-1]])
    return fig.update_yaxes(type="log", dtick="D2", range=[-0.25, np.log10(max(most, 1)) + 0.15])  # counts of 1 show


# ---- Fig 1a ----


def landscape_figure(results: dict[str, dict]) -> go.Figure:
    """Fig 1a: NLL + ℓ2 around the trained weights, as lines for 1-D results or contours side by side on one
    colour range for 2-D results."""
    dims = {2 if data.get("y") is not None else 1 for data in results.values()}
    if len(dims) > 1:
        raise ValueError("1-D and 2-D loss landscapes cannot share a figure")
    return _landscape_2d(results) if dims == {2} else _landscape_1d(results)


def _landscape_1d(results: dict[str, dict]) -> go.Figure:
    fig = go.Figure()
    for slot, (label, data) in zip(run_places(results), results.items()):
        hover = f"step %{{x:.2f}}: {LOSS} %{{y:.4g}}"
        fig.add_trace(_line(slot, run_name(label, data), data["x"], data["loss"], hover))
    layout(
        fig,
        f"Fig 1a · loss landscape ({LOSS}), one direction",
        "Step along a filter-normalized random direction",
        f"Loss ({LOSS}), log axis",
    )
    return fig.update_yaxes(type="log")  # BN models' loss grows by orders of magnitude away from the optimum


def _landscape_2d(results: dict[str, dict]) -> go.Figure:
    names = [run_name(label, data) for label, data in results.items()]
    fig = make_subplots(rows=1, cols=len(results), subplot_titles=names, shared_yaxes=True, horizontal_spacing=0.04)
    logs = [np.log10(data["loss"]) for data in results.values()]  # one colour per decade: CNNs span many
    for col, (name, data, z) in enumerate(zip(names, results.values(), logs), 1):
        fig.add_contour(
            x=data["x"],
            y=data["y"],
            z=z,
            customdata=data["loss"],
            coloraxis="coloraxis",
            row=1,
            col=col,
            contours={"coloring": "heatmap", "showlabels": False},
            hovertemplate=f"{name}<br>(%{{x:.2f}}, %{{y:.2f}}): {LOSS} %{{customdata:.4g}}<extra></extra>",
        )
        fig.add_scatter(
            x=[0],
            y=[0],
            mode="markers",
            marker={"symbol": "x", "size": 10, "color": "white", "line": {"color": "black", "width": 1}},
            name="trained weights",
            legendgroup="w",
            showlegend=col == 1,
            row=1,
            col=col,
            hovertemplate=f"{name}: trained weights<extra></extra>",
        )
    layout(fig, f"Fig 1a · loss landscape ({LOSS})", "Step along d₁ (filter-normalized)", "")
    fig.update_xaxes(title="").update_xaxes(title="Step along d₁ (filter-normalized)", col=(len(results) + 1) // 2)
    fig.update_yaxes(title="Step along d₂ (filter-normalized)", col=1)
    low, high = min(float(z.min()) for z in logs), max(float(z.max()) for z in logs)
    decades = list(range(int(np.floor(low)), int(np.ceil(high)) + 1))
    colorbar = {
        "title": {"text": f"{LOSS} (log scale)", "side": "right"},
        "thickness": 12,
        "tickvals": decades,
        "ticktext": [f"{10.0**k:g}" for k in decades],
    }
    return fig.update_layout(
        margin={"t": 72}, coloraxis={"cmin": low, "cmax": high, "colorscale": "Viridis", "colorbar": colorbar}
    )


# ---- Fig 12b ----


def _padded(values: list[float], share: float) -> list[float]:
    """An axis range around `values` with `share` of their spread (at least 1) free on each side."""
    pad = max(max(values) - min(values), 1.0) * share
    return [min(values) - pad, max(values) + pad]


LABEL_SPOTS = (
    "top center",
    "bottom center",
    "middle right",
    "middle left",
    "top right",
    "bottom left",
    "top left",
    "bottom right",
)


LEADER_LENGTHS = (34, 50, 66, 82, 98)  # px from a crowded point to the centre of its label on a leader line
LEADER_ANGLES = (90, 270, 0, 180, 45, 135, 225, 315, 60, 120, 240, 300, 30, 150, 210, 330)  # degrees from the right


@dataclass(frozen=True)
class LabelSpot:
    """Where a point's label goes: beside its marker (`position`, a plotly textposition) or, where nothing
    beside it is free, centred `offset` pixels (right, up) away on a leader line; neither where no place is
    free (the point's legend entry still names it)."""

    position: str | None = None
    offset: tuple[float, float] | None = None


def label_spots(
    points: list[tuple[float, float]],
    labels: list[str],
    ranges: tuple[list[float], list[float]],
    size_px: tuple[float, float] = (340, 250),
) -> list[LabelSpot]:
    """A label place per point so that no label box covers another label or a marker, or crosses the
    plot's edge, judged in pixels of a plot area of about `size_px` (text 7 px per character and 14 px
    high). Each label takes the first of LABEL_SPOTS that is free and nearer its own marker than any other
    (where it would read as that point's label); a point with none free gets its label farther out, at the
    first free place of LEADER_LENGTHS x LEADER_ANGLES whose leader line crosses no other marker or label."""
    (x0, x1), (y0, y1) = ranges
    to_px = [((x - x0) / (x1 - x0) * size_px[0], (y - y0) / (y1 - y0) * size_px[1]) for x, y in points]
    taken = [(px - 6, py - 6, px + 6, py + 6) for px, py in to_px]  # the markers

    def box(spot: str, px: float, py: float, chars: int) -> tuple[float, float, float, float]:
        w, h = 7 * chars, 14
        vertical, horizontal = spot.split()
        left = {"center": px - w / 2, "right": px + 8, "left": px - 8 - w}[horizontal]
        bottom = {"top": py + 8, "bottom": py - 8 - h, "middle": py - h / 2}[vertical]
        return left, bottom, left + w, bottom + h

    def clear(a: tuple, b: tuple) -> bool:
        return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]

    def inside(a: tuple) -> bool:
        return a[0] >= 0 and a[1] >= 0 and a[2] <= size_px[0] and a[3] <= size_px[1]

    def nearest_own(a: tuple, i: int) -> bool:
        centre = ((a[0] + a[2]) / 2, (a[1] + a[3]) / 2)
        distances = [math.dist(centre, point) for point in to_px]
        return all(d >= distances[i] for d in distances)

    def free(a: tuple, i: int) -> bool:
        return inside(a) and all(clear(a, t) for j, t in enumerate(taken) if j != i)

    def line_clear(start: tuple[float, float], end: tuple[float, float], i: int, own: tuple) -> bool:
        if any(_segments_cross(start, end, *leader) for leader in leaders):
            return False
        samples = [
            (start[0] + (end[0] - start[0]) * k / 24, start[1] + (end[1] - start[1]) * k / 24) for k in range(25)
        ]
        on_line = [(x, y, x, y) for x, y in samples if clear((x, y, x, y), own)]
        return all(clear(s, t) for s in on_line for j, t in enumerate(taken) if j != i)

    spots, leaders = [], []
    for i, ((px, py), label) in enumerate(zip(to_px, labels)):
        boxes = {s: box(s, px, py, len(label)) for s in LABEL_SPOTS}
        spot = next((s for s, b in boxes.items() if free(b, i) and nearest_own(b, i)), None)
        spots.append(LabelSpot(position=spot))
        if spot is not None:
            taken.append(boxes[spot])
    for i, ((px, py), label) in enumerate(zip(to_px, labels)):
        if spots[i].position is not None:
            continue
        for length in LEADER_LENGTHS:
            ends = [(length * math.cos(math.radians(a)), length * math.sin(math.radians(a))) for a in LEADER_ANGLES]
            boxes = {(dx, dy): box("middle center", px + dx, py + dy, len(label)) for dx, dy in ends}
            offset = next(
                (o for o, b in boxes.items() if free(b, i) and line_clear((px, py), (px + o[0], py + o[1]), i, b)),
                None,
            )
            if offset is not None:
                spots[i] = LabelSpot(offset=offset)
                taken.append(boxes[offset])
                leaders.append(((px, py), (px + offset[0], py + offset[1])))
                break
    return spots


def _segments_cross(
    a: tuple[float, float], b: tuple[float, float], c: tuple[float, float], d: tuple[float, float]
) -> bool:
    """Whether segment ab crosses segment cd (touching ends do not count)."""

    def side(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def point_label(label: str) -> str:
    """A crowded scatter's short label ('step 3' for 'AlterNet step 3', 'ResNet' for 'ResNet (step 0)'); the
    legend keeps the full name."""
    return re.sub(r"^AlterNet (step \d+)$", r"\1", label.removesuffix(" (step 0)"))


def corruption_figure(results: dict[str, dict]) -> go.Figure:
    """Fig 12b: mean corrupted accuracy against clean accuracy (left, labelled points) and accuracy by
    severity, 0 being clean (right), in percent, on the figure's own test images."""
    counts = {data["images"] for data in results.values() if data.get("images")}
    on = f", on these {counts.pop():,} images" if len(counts) == 1 else ""
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=[f"Corrupted against clean accuracy{on}", "Accuracy by severity"],
    )
    clean = [100 * data["clean_accuracy"] for data in results.values()]
    corrupted = [100 * data["mean_accuracy"] for data in results.values()]
    ranges = (_padded(clean, 0.25), _padded(corrupted, 0.2))  # room for the labels
    short = [point_label(label) for label in results]
    spots = label_spots(list(zip(clean, corrupted)), short, ranges)
    for slot, (label, data) in zip(run_places(results), results.items()):
        name = run_name(label, data)
        point = _line(
            slot,
            name,
            [100 * data["clean_accuracy"]],
            [100 * data["mean_accuracy"]],
            "clean %{x:.1f}%, corrupted %{y:.1f}%",
            legendgroup=name,
            text=[short[slot] if spots[slot].position else ""],
            textposition=spots[slot].position or LABEL_SPOTS[0],
        )
        fig.add_trace(point.update(mode="markers+text", marker_size=11), row=1, col=1)
        if spots[slot].offset:
            dx, dy = spots[slot].offset
            fig.add_annotation(
                x=point.x[0],
                y=point.y[0],
                text=short[slot],
                ax=dx,
                ay=-dy,
                standoff=7,
                showarrow=True,
                arrowhead=0,
                arrowwidth=1,
                arrowcolor=point.line.color,
                row=1,
                col=1,
            )
        by_severity = _percent([data["clean_accuracy"], *data["accuracy_by_severity"]])
        fig.add_trace(
            _line(
                slot,
                name,
                [0, *data["severities"]],
                by_severity,
                "severity %{x}: accuracy %{y:.1f}%",
                legendgroup=name,
                showlegend=False,
            ),
            row=1,
            col=2,
        )
    layout(fig, "Fig 12b · robustness to common corruptions (CIFAR-C style)", height=420)
    fig.update_layout(margin={"t": 72})
    fig.update_xaxes(title="Clean accuracy (%)", range=ranges[0], col=1)
    fig.update_yaxes(title="Corrupted accuracy (%, mean)", range=ranges[1], col=1)
    fig.update_xaxes(title="Severity (0: clean)", dtick=1, col=2)
    return fig.update_yaxes(title="Accuracy (%)", col=2)


def corruption_detail_figure(one: dict, label: str = "") -> go.Figure:
    """Fig 12b per corruption: one model's accuracy under each corruption (mean over severities, each severity
    in the hover) as horizontal bars, its clean accuracy as a dashed line."""
    names = list(one["accuracy_by_corruption"])
    severities = ", ".join(f"s{s} %{{customdata[{k}]:.1f}}%" for k, s in enumerate(one["severities"]))
    fig = go.Figure(
        go.Bar(
            y=[n.replace("_", " ") for n in names],
            x=_percent(list(one["accuracy_by_corruption"].values())),
            orientation="h",
            name="mean over severities",
            marker={"color": MODEL_COLORS[0]},
            customdata=[_percent(one["accuracy"][n]) for n in names],
            hovertemplate=f"%{{y}}: %{{x:.1f}}%<br>{severities}<extra></extra>",
        )
    )
    fig.add_vline(100 * one["clean_accuracy"], line={"color": "#555", "dash": "dash"})
    fig.add_scatter(x=[None], y=[None], mode="lines", name="clean accuracy", line={"color": "#555", "dash": "dash"})
    title = "Fig 12b · accuracy per corruption" + (f" · {run_name(label, one)}" if label else "")
    layout(fig, title, "Accuracy (%)", "Corruption", height=420)
    fig.update_xaxes(range=[0, 100])
    return fig.update_yaxes(autorange="reversed")


# ---- Fig 1b ----


def trajectory_figure(trajectories: dict[str, dict]) -> go.Figure:
    """Fig 1b: r_t = ‖Δw_t‖/‖Δw_init‖ against θ_t (degrees) for every snapshot, one line per model; the
    sector 0..90° unless an angle needs more."""
    fig = go.Figure()
    for slot, (label, data) in zip(run_places(trajectories), trajectories.items()):
        name = run_name(label, data)
        fig.add_scatterpolar(
            r=data["r"],
            theta=data["theta_deg"],
            customdata=data["epochs"],
            mode="lines+markers",
            name=name,
            **run_style(slot),
            hovertemplate=f"{name}<br>epoch %{{customdata}}: r %{{r:.3f}}, θ %{{theta:.1f}}°<extra></extra>",
        )
    widest = max((t for data in trajectories.values() for t in data["theta_deg"]), default=0.0)
    top = min(180, max(90, 15 * math.ceil(widest / 15)))
    layout(fig, "Fig 1b · optimization trajectory: r_t against θ_t (degrees)", None, height=520)
    fig.add_annotation(
        text="radius r_t = ‖Δw_t‖ / ‖Δw_init‖ (1: the initial weights, 0: the final ones) · angle θ_t",
        xref="paper",
        yref="paper",
        x=0.5,
        y=-0.02,
        showarrow=False,
        yanchor="top",
    )
    return fig.update_layout(
        polar={
            "domain": {"x": [0, 1], "y": [0.04, 1]},
            "sector": [0, top],
            "angularaxis": {"dtick": 15, "ticksuffix": "°", "direction": "counterclockwise", "rotation": 0},
            "radialaxis": {"rangemode": "tozero", "angle": 0, "side": "clockwise"},
        }
    )
