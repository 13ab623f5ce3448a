"""The AlterNet panel's views, free of UI code: the placement as a grid of toggles, the architecture
drawn as in the paper's Fig 11 (an SVG), and the Markdown around it."""

from __future__ import annotations

from html import escape

import numpy as np
from PIL import Image

from app.backend.cifar_lab import BASELINES, STEPS, Cost, LabRun, alternet_label, step_of
from app.views.texts import SCROLL_SIDEWAYS
from engine.models.alternet import EXPANSION, HEADS
from engine.models.checkpoint import read_meta
from engine.models.cifar_family import DEFAULT_WIDTH, bundled_path
from engine.models.member_accuracy import member_accuracy
from engine.models.placement import PAPER_DEPTHS, Placement
from engine.models.registry import get_spec

CONV, MSA, POOL = "#ffffff", "#b8b8b8", "#9ec5e8"  # Fig 11: white Conv, gray MSA, blue subsampling
BOX_W, BOX_H, GAP, STAGE_GAP = 46, 64, 6, 26
SHOW_SIZE = 192  # the 32x32 input, enlarged with nearest neighbour
FIGURE_HEIGHT = 480  # Figs 8 and 9 of the tab: a plot area of some 280 px above a legend of five rows on a phone
DRAWING_MIN_WIDTH = 760  # Fig 11 scrolls sideways on a narrower screen rather than shrink its labels to specks


def grid_choices(depths: tuple[int, ...] = PAPER_DEPTHS) -> list[list[tuple[str, int]]]:
    """Per stage, the blocks that may be MSAs (1-based; block 1 is always the stage's Conv)."""
    return [[(f"block {b}", b) for b in range(2, depth + 1)] for depth in depths]


def stage_info(stage: int) -> str:
    """The line under stage `stage`'s toggles (0-based): why its block 1 is not offered."""
    return "Block 1 is always Conv: it widens" + (" and subsamples" if stage else "")


def grid_values(placement: Placement) -> list[list[int]]:
    """Per stage, the 1-based MSA blocks: the checked toggles."""
    return [[b + 1 for b in blocks] for blocks in placement.msa]


def from_grid(values: list[list[int]], depths: tuple[int, ...] = PAPER_DEPTHS) -> Placement:
    return Placement(depths, tuple(tuple(int(b) - 1 for b in blocks or []) for blocks in values))


def _box(x: float, y: float, fill: str, title: str, lines: list[str]) -> str:
    styles = ['font-size="12" font-weight="600"'] + ['font-size="10"'] * (len(lines) - 1)
    text = "".join(
        f'<text x="{x + BOX_W / 2}" y="{y + 24 + 16 * i}" text-anchor="middle" {style}>{escape(line)}</text>'
        for i, (line, style) in enumerate(zip(lines, styles))
    )
    return (
        f'<g><title>{escape(title)}</title><rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" '
        f'fill="{fill}" stroke="#333" stroke-width="1.2"/>{text}</g>'
    )


def architecture_svg(placement: Placement, width: int = DEFAULT_WIDTH) -> str:
    """Fig 11: one box per block, left to right, grouped by stage, with the stem and the head."""
    top, parts, x = 34, [], 8.0
    parts.append(_box(x, top, CONV, "stem: 3x3 conv, BN, ReLU", ["Stem", "3×3"]))
    x += BOX_W + STAGE_GAP
    size = 32
    for s, mask in enumerate(placement.masks()):
        size = 32 // 2**s
        channels = width * 2**s * EXPANSION
        start = x
        for b, is_msa in enumerate(mask):
            token = f"s{s + 1}:{b + 1}"
            if is_msa:
                box = (MSA, f"{token}: MSA block, {HEADS[s]} heads, 4x4 windows", ["MSA", f"{HEADS[s]}h", token])
            elif b == 0 and s > 0:
                box = (POOL, f"{token}: Conv block, subsamples by 2", ["Conv", "↓2", token])
            else:
                box = (CONV, f"{token}: Conv block (bottleneck)", ["Conv", "", token])
            parts.append(_box(x, top, *box))
            x += BOX_W + GAP
        middle = (start + x - GAP) / 2
        parts.append(
            f'<text x="{middle}" y="{top - 20}" text-anchor="middle" font-size="13" font-weight="600">'
            f"Stage {s + 1}</text>"
            f'<text x="{middle}" y="{top - 6}" text-anchor="middle" font-size="10" fill="#555">'
            f"{size}×{size} · {channels} ch</text>"
            f'<line x1="{start}" y1="{top + BOX_H + 8}" x2="{x - GAP}" y2="{top + BOX_H + 8}" stroke="#999"/>'
        )
        x += STAGE_GAP - GAP
    parts.append(_box(x, top, CONV, "head: BN, ReLU, global average pool, linear", ["Head", "GAP", "FC"]))
    x += BOX_W + 8
    legend_y = top + BOX_H + 30
    legend = "".join(
        f'<rect x="{8 + 170 * i}" y="{legend_y - 11}" width="22" height="14" rx="3" fill="{fill}" stroke="#333"/>'
        f'<text x="{36 + 170 * i}" y="{legend_y}" font-size="12">{label}</text>'
        for i, (fill, label) in enumerate([(CONV, "Conv block"), (MSA, "MSA block"), (POOL, "subsampling block")])
    )
    height = legend_y + 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="alternet-svg" viewBox="0 0 {x:.0f} {height}" width="100%" '
        'role="img" '
        f'aria-label="AlterNet architecture, MSA blocks {escape(str(placement))}" '
        f'style="font-family:sans-serif;background:#fff">{"".join(parts)}{legend}</svg>'
    )


def drawing_html(placement: Placement) -> str:
    """Fig 11 for a page: at least DRAWING_MIN_WIDTH px wide, scrolling sideways in its box on a narrower screen,
    with a line under it saying so there (app/views/page_style.LAYOUT_CSS shows the line where the box is narrower)."""
    svg = architecture_svg(placement).replace(
        'style="font-family:sans-serif;', f'style="min-width:{DRAWING_MIN_WIDTH}px;font-family:sans-serif;', 1
    )
    return (
        f'<div class="sideways"><div class="scrolls" style="overflow-x:auto;max-width:100%">{svg}</div>'
        f'<p class="scroll-hint">{SCROLL_SIDEWAYS}</p></div>'
    )


def cost_markdown(cost: Cost) -> str:
    return (
        f"**{cost.params / 1e6:.2f} M** parameters · **{cost.flops / 1e9:.2f} GFLOPs** per 32×32 image "
        "(2 per multiply-add)"
    )


def trained_accuracy(name: str, options: dict) -> str:
    """'✓ 88.1% (mean of 3 seeds, 40 ep.)' (the member's CIFAR-10 test accuracy, engine.models.member_accuracy's,
    and its training epochs, since the family is retrained one member at a time) or '✗' where none is bundled."""
    path = bundled_path(name, options)
    if path is None:
        return "✗"
    meta, accuracy = read_meta(path), member_accuracy(path)
    epochs = f"{meta.epochs:g} ep." if meta.epochs else ""
    if accuracy is None:
        return f"✓ ({epochs})" if epochs else "✓"
    notes = ", ".join(note for note in (accuracy.seeds, epochs) if note)
    return f"✓ {100 * accuracy.mean:.1f}%" + (f" ({notes})" if notes else "")


def steps_markdown() -> str:
    """The build-up sequence (Fig 12a) as a table, with each step's trained checkpoint and accuracy."""
    rows = ["| Step | MSA blocks (per stage) | Trained: test acc. |", "|:-:|---|:-:|"]  # narrow: fits a column
    for n, placement in enumerate(STEPS):
        mark = trained_accuracy("alternet", {"msa": str(placement)})
        rows.append(f"| {n} | `{placement}` ({'-'.join(map(str, placement.counts))}) | {mark} |")
    for name in BASELINES:
        rows.append(f"| – | {get_spec(name).label} | {trained_accuracy(name, {})} |")
    rows.append(
        "\n✓ a checkpoint trained here is bundled and loaded (accuracy on the 10,000 CIFAR-10 test images, after "
        "the epochs shown: compare steps trained equally long); "
        "✗ none is: the model runs with random weights."
    )
    return "\n".join(rows)


def weights_banner(placement: Placement) -> str:
    """Which of the panel's models run with random weights, or an empty string when all are trained."""
    models = [(alternet_label(placement), "alternet", {"msa": str(placement)})]
    models += [(get_spec(name).label, name, {}) for name in BASELINES]
    random = [label for label, name, options in models if bundled_path(name, options) is None]
    if not random:
        return ""
    return (
        f"⚠️ **Untrained: random weights** (seed 0) for {', '.join(random)}: no trained checkpoint is "
        "bundled for them, so predictions are meaningless and the curves show the architecture alone."
    )


def placement_status(placement: Placement) -> str:
    step = step_of(placement)
    where = f"build-up step {step} of Fig 12a" if step is not None else "a custom placement (not on the build-up path)"
    return f"MSA blocks `{placement}`: {where}, {placement.total} MSA block{'s' * (placement.total != 1)}."


def accuracy_markdown(run: LabRun) -> str:
    """Top-1 accuracy per model on the subset beside the model's own (on all the test images), saying why it is
    chance-level with random weights."""
    lines = [f"**Top-1 accuracy on these {run.images} CIFAR-10 test images** (balanced, chance is 10%):"]
    for result, accuracy, is_random, quoted in zip(run.results, run.accuracy or [], run.random, run.quoted):
        why = " — chance level: the weights are random" if is_random else (f" (the model: {quoted})" if quoted else "")
        lines.append(f"- {result.label}: **{100 * accuracy:.1f}%**{why}")
    return "\n".join(lines)


def input_view(run: LabRun) -> np.ndarray:
    """The 32x32 image the models saw, enlarged with nearest neighbour so its pixels show."""
    return np.asarray(Image.fromarray(run.seen).resize((SHOW_SIZE, SHOW_SIZE), Image.NEAREST))
