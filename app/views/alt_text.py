"""Text alternatives for the pictures both front ends show (a screen reader reads them, as do the handout's images):
what each picture shows, in plain words, from the texts that the page prints beside it."""

from __future__ import annotations

import re
from numbers import Number

import plotly.graph_objects as go

MARKUP = re.compile(r"\*+|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])|[`#>]|\[|\]\([^)]*\)")  # not a_name's _
BULLET = re.compile(r"(^|\n)\s*[-•]\s+")
TAG = re.compile(r"<[^>]+>")
MAX_LINES = 6  # a plot with more lines is described by its first and last line and a count


def plain(markdown: str) -> str:
    """Markdown as one line of plain text: no emphasis, links or headings, whitespace collapsed."""
    return " ".join(MARKUP.sub("", BULLET.sub(r"\1", markdown)).split())


def photo(name: str) -> str:
    return f"The chosen photo: {name}" if name else "The chosen photo"


def map_of(title: str, caption: str) -> str:
    """A column's map: its title ('Where it looks') and its caption, which names the method, model and class."""
    return plain(f"{title}: {caption}") if caption else plain(title)


def picture(title: str, text: str) -> str:
    """A picture beside a text: its title, then the text's first sentence."""
    first = plain(text).split(". ")[0].rstrip(".")
    return f"{plain(title)}: {first}." if first else plain(title)


def _value(v) -> str:
    return f"{v:.3g}" if isinstance(v, Number) else str(v)


def _line(trace) -> str:
    """One line or set of bars in words: where it starts, where it ends, where it is highest."""
    points = [(x, y) for x, y in zip(trace.x, trace.y) if isinstance(y, Number) and y == y]
    if not points:
        return ""
    top = max(points, key=lambda p: p[1])
    name = TAG.sub(" ", str(trace.name)).strip()
    start, end, high = (f"{_value(y)} (at {_value(x)})" for x, y in (points[0], points[-1], top))
    return f"{name}: from {start} to {end}, highest {high}"


def lines_of(fig: go.Figure) -> str:
    """What a plot's lines show, from its data: each line's start, end and highest point (the first and last of
    many lines, and how many lie between)."""
    traces = [t for t in fig.data if t.visible is not False and t.name and getattr(t, "y", None) is not None]
    said = [line for line in map(_line, (t for t in traces if t.x is not None)) if line]
    if len(said) > MAX_LINES:
        said = [said[0], f"{len(said) - 2} more lines between", said[-1]]
    axes = [TAG.sub(" ", fig.layout[axis].title.text or "").strip() for axis in ("yaxis", "xaxis")]
    against = f"{axes[0]} against {axes[1]}: " if all(axes) and said else ""
    return against + "; ".join(said)


def figure_title(fig: go.Figure) -> str:
    """A figure's title (and its subtitle lines) as one line of text."""
    title = fig.layout.title.text or ""
    return " ".join(TAG.sub(" · ", title).replace(" ·  · ", " · ").split()).strip(" ·")


def described(fig: go.Figure, found: str = "") -> go.Figure:
    """`fig` carrying its text alternative (in `layout.meta`, where the page's script gives it to screen readers):
    its title, then what it found (`found`, Markdown: the words the page prints beside it), or else what its lines
    show."""
    said = plain(found) or lines_of(fig)
    title = figure_title(fig)
    fig.layout.meta = {"alt": f"{title}. {said}" if said else title}
    return fig


def of(fig: go.Figure) -> str:
    """A figure's text alternative: the one it carries, or its title and lines."""
    meta = fig.layout.meta
    return (
        meta["alt"] if isinstance(meta, dict) and meta.get("alt") else described(go.Figure(fig), "").layout.meta["alt"]
    )
