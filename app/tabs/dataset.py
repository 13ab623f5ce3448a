"""The dataset panel (in the Compare tab): Figs 2a, 8 and 9 averaged over a ZIP of images for the picked
models, and those figures for slides.

    tab = DatasetTab(service)
    view = tab.measure("photos.zip", ["resnet50"], "", "auto")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go

from app.backend.service import MAX_DATASET_BYTES, MAX_DATASET_IMAGES, Report, Service, picked_models
from app.exports import export
from app.tabs import Download, Problem, problem, problems
from app.views import figures
from app.views import texts as text
from engine.errors import shown
from engine.results import ModelResult

EXPLANATION = text.DATASET.format(images=MAX_DATASET_IMAGES, megabytes=MAX_DATASET_BYTES // 2**20)


@dataclass(frozen=True)
class DatasetView:
    """The averaged curves of each model, ready to lay out."""

    results: list[ModelResult]
    summary: str  # Markdown: each model with its image count and the files skipped
    high_frequency: go.Figure
    variance: go.Figure
    spectra: list[go.Figure]  # Fig 2a per model
    measured: str = ""  # what the curves were measured on, for the exports' subtitles: 'mean over photos.zip'


@dataclass
class DatasetTab:
    """The dataset panel's decisions, over the app's service."""

    service: Service

    def measure(
        self,
        archive: str | Path | None,
        checked: list[str],
        typed: str | None,
        weights: str | None,
        report: Report | None = None,
        shown_name: str | None = None,
    ) -> DatasetView:
        """The curves of the checked and typed models averaged over the images of `archive` (an uploaded
        ZIP); `shown_name` replaces the file's name in messages (a front end's temporary copy)."""
        if not archive:
            raise problem("Upload a ZIP of images first.")
        try:
            with problems():
                measured = self.service.dataset_curves(
                    archive, picked_models(checked, typed), self.service.network_weights(weights), report=report
                )
        except Problem as exc:
            if shown_name:
                raise Problem(str(exc).replace(Path(archive).name, shown_name)) from None
            raise
        results = measured.results
        skipped = f" {measured.skipped_note}." if measured.skipped else ""
        return DatasetView(
            results,
            f"Averaged over the ZIP: {'; '.join(r.label for r in results)}.{skipped}",
            figures.high_frequency(results),
            figures.variance(results, True),
            [figures.fourier_spectrum(result) for result in results],
            f"mean over {shown(shown_name or Path(archive).name)}",
        )

    def export(self, view: DatasetView | None) -> Download:
        """Figs 8, 9 and 2a as PNG and SVG, each subtitled with the ZIP it was measured on, with the JSON and
        CSV of the values, in one ZIP."""
        if view is None or not view.results:
            raise problem("Measure a ZIP of images first.")
        with problems():
            zipped = export.dataset_zip(view.results, self.service.device_name, view.measured)
            return Download(zipped, "dataset-curves.zip")
