"""The AlterNet tab (paper Section 4): where the MSA blocks go, as a build-up step, a grid of toggles or
text, kept in step; the architecture (Fig 11), its cost, and Figs 8 and 9 of the chosen AlterNet next to
the CIFAR ResNet and ViT, on the photo or averaged over CIFAR-10 test images.

    tab = AlterNetTab(CifarLab(service))
    builder = tab.from_text("s3:6,s4:2,s4:4")   # the step, toggles and text that match
    view = tab.on_photo(builder.spec, "cat.jpg")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from app.backend.cifar_lab import STEPS, CifarLab, LabRun, step_of
from app.backend.service import Report
from app.exports import export
from app.tabs import Download, Problem, problem, problems
from app.views import alternet as view
from app.views import evidence, figures
from engine.data.images import ImageInput
from engine.models.placement import PAPER_DEPTHS, Placement, PlacementError, parse

SUBSET_DEFAULT, SUBSET_MIN, SUBSET_MAX = 100, 10, 1000
PAPER_STEP = len(STEPS) - 1
NOT_A_PLACEMENT = "the MSA blocks typed as text are not a placement ({problem}); what is shown is the last good one."
NOT_AVERAGED, NOT_EXPORTED = "Not averaged", "Not exported"  # what NOT_A_PLACEMENT refuses, in its words


@dataclass(frozen=True)
class Builder:
    """The builder's three controls, kept in step: build-up step (None: a custom placement), the MSA
    blocks chosen per stage (1-based) and the placement as text."""

    step: int | None
    grid: list[list[int]]
    spec: str


@dataclass(frozen=True)
class AlterNetView:
    """What the tab shows for one placement, ready to lay out."""

    placement: Placement
    drawing: str  # Fig 11: its SVG in a box that scrolls sideways on a narrow screen
    cost: str  # Markdown
    banner: str  # which models run with random weights; "" when all are trained
    seen: np.ndarray | None  # the 32x32 input, enlarged
    high_frequency: go.Figure | None
    variance: go.Figure | None
    source: str  # Markdown: what the curves are measured on
    accuracy: str  # Markdown: subset accuracies, "" for a photo
    run: LabRun | None
    here: str = ""  # Markdown: Figs 8 and 9's claims counted on the curves shown
    measured: str = ""  # what the curves are measured on, for the exported figures' subtitles


def builder(placement: Placement) -> Builder:
    return Builder(step_of(placement), view.grid_values(placement), str(placement))


@dataclass
class AlterNetTab:
    """The AlterNet tab's decisions, over the app's CIFAR lab (its models run on the service's model thread)."""

    lab: CifarLab

    @staticmethod
    def placement(spec: str) -> Placement:
        """The placement `spec` names; a Problem naming every bad entry otherwise."""
        try:
            return parse(spec, PAPER_DEPTHS)
        except PlacementError as exc:
            raise problem(str(exc)) from None

    @staticmethod
    def from_step(step: int | None) -> Builder:
        if step is None or not 0 <= int(step) < len(STEPS):
            raise problem(f"the build-up step must be 0 to {PAPER_STEP}, got {step}")
        return builder(STEPS[int(step)])

    @staticmethod
    def from_grid(values: list[list[int]]) -> Builder:
        try:
            return builder(view.from_grid(values))
        except PlacementError as exc:
            raise problem(str(exc)) from None

    def from_text(self, spec: str) -> Builder:
        return builder(self.placement(spec))

    @staticmethod
    def typed_problem(typed: str | None) -> str | None:
        """Why the text typed in the spec box is not a placement (None: it is one, or none was typed)."""
        if typed is None:
            return None
        try:
            parse(typed, PAPER_DEPTHS)
        except PlacementError as exc:  # not logged: the box's own check (from_text) said it once
            return str(exc)
        return None

    @classmethod
    def unless_typed_bad(cls, doing: str, typed: str | None) -> None:
        """The rule of the spec box, in every front end: while it holds text that is not a placement, averaging and
        exporting are refused with NOT_A_PLACEMENT, after `doing` ("Not averaged", "Not exported"); what is shown
        stays, the last good placement's."""
        if (why := cls.typed_problem(typed)) is not None:
            raise Problem(f"{doing}: {NOT_A_PLACEMENT.format(problem=why)}")

    def on_photo(self, spec: str, photo: ImageInput | None, name: str = "") -> AlterNetView:
        """The placement's drawing and cost, and the three models' curves on the photo (none without one);
        `name` names the photo in exports (default: its file name, where it is a path)."""
        placement = self.placement(spec)
        with problems():
            run = self.lab.analyze_photo(photo, placement) if photo else None
        name = name or (Path(photo).name if isinstance(photo, (str, Path)) else "the photo")
        return self.show(
            run, placement, "your photo, center-cropped and resized to 32×32", f"on {name}, resized to 32×32"
        )

    def on_subset(self, spec: str, images: int, report: Report | None = None, typed: str | None = None) -> AlterNetView:
        """The curves averaged over `images` balanced CIFAR-10 test images, with each model's accuracy; refused
        while the spec box holds `typed`, text that is not a placement (unless_typed_bad)."""
        self.unless_typed_bad(NOT_AVERAGED, typed)
        placement = self.placement(spec)
        if not SUBSET_MIN <= int(images) <= SUBSET_MAX:
            raise problem(f"average over {SUBSET_MIN} to {SUBSET_MAX} test images, not {images}")
        with problems():
            run = self.lab.analyze_subset(placement, int(images), report)
        mean = f"mean over {run.images} CIFAR-10 test images"
        return self.show(run, placement, f"{mean} (the first is shown)", mean)

    def show(self, run: LabRun | None, placement: Placement, what: str, measured: str = "") -> AlterNetView:
        with problems():
            cost = view.cost_markdown(self.lab.cost(placement))
        common = dict(
            placement=placement,
            drawing=view.drawing_html(placement),
            cost=cost,
            banner=view.weights_banner(placement),
            run=run,
            measured=measured,
        )
        if run is None:
            return AlterNetView(
                **common,
                seen=None,
                high_frequency=None,
                variance=None,
                source="Upload a photo or pick a sample above to see the curves.",
                accuracy="",
            )
        return AlterNetView(
            **common,
            seen=view.input_view(run),
            high_frequency=figures.high_frequency(run.results, shaded=0).update_layout(height=view.FIGURE_HEIGHT),
            variance=figures.variance(run.results, True, shaded=0).update_layout(height=view.FIGURE_HEIGHT),
            source=f"{view.placement_status(placement)} Curves: {what}; shading: AlterNet's blocks.",
            accuracy=view.accuracy_markdown(run) if run.accuracy else "",
            here=f"{evidence.high_frequency_here(run.results)}\n\n{evidence.variance_here(run.results)}",
        )

    @staticmethod
    def export(shown: AlterNetView | None, typed: str | None = None) -> Download:
        """The tab's Fig 8 and 9 as PNG and SVG (subtitled with what they were measured on) and its Fig 11
        drawing as SVG, in one ZIP; refused while the spec box holds `typed`, text that is not a placement."""
        AlterNetTab.unless_typed_bad(NOT_EXPORTED, typed)
        if shown is None or shown.run is None:
            raise problem("Pick a photo or average over the test images first.")
        with problems():
            zipped = export.alternet_zip(shown.run, shown.placement, shown.measured)
            return Download(zipped, f"alternet-{shown.placement.tag}.zip")
