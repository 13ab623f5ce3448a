"""The Paper figures tab (Figs 1a, 1b, 1c/4, 2b, 10a, 10b, 12b; then the map checks): each analysis's explanation,
stored figures and caption at once; Recompute per analysis (where the app recomputes it); Fig 2b's noise on the
user's photo; every figure for slides.

    tab = PaperTab(PaperFindings(service))
    for section in tab.sections({}):  section.figures, section.caption
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import plotly.graph_objects as go

from app.backend.service import Report
from app.exports import export
from app.exports import paper_findings as findings
from app.exports.paper_findings import ORDER, PaperFindings
from app.tabs import Download, problem, problems
from app.views import texts as text
from app.views.alt_text import described
from engine.data.images import ImageInput
from engine.paper.findings import FINDINGS

Recomputed = dict[str, dict]  # analysis name -> its section, recomputed in this session
NOISE = "noise"  # the analysis that also runs on the user's photo


@dataclass(frozen=True)
class Section:
    """One analysis as the tab shows it."""

    name: str
    explanation: str  # Markdown
    figures: list[go.Figure]
    panels: int  # how many figure places the analysis has (figures may be fewer before a first run)
    caption: str  # Markdown
    recompute: str | None  # the Recompute button's text; None where the analysis is not recomputed in the app
    images: int  # subset images by default


@dataclass
class PaperTab:
    """The Paper figures tab's decisions, over the app's findings board."""

    board: PaperFindings
    intro: str = text.FINDINGS_INTRO

    @staticmethod
    def section(name: str, recomputed: Recomputed) -> Section:
        """Analysis `name` as recomputed in the session, else as stored (drawn once per process: Streamlit
        redraws every tab on each rerun, and the stored figures never change; a Section is not modified)."""
        return _drawn(name, recomputed[name]) if name in recomputed else _stored(name)

    def sections(self, recomputed: Recomputed) -> list[Section]:
        """Every analysis, in the paper's order: as recomputed in the session, else as stored."""
        return [self.section(name, recomputed) for name in ORDER]

    def recompute(
        self, recomputed: Recomputed, name: str, images: int, report: Report | None = None
    ) -> tuple[Recomputed, Section]:
        """Analysis `name` run again on `images` subset images; the session's recomputed sections and the new one."""
        if name not in FINDINGS or not findings.FIGURES[name].in_app:
            shown = [n for n in FINDINGS if findings.FIGURES[n].in_app]
            raise problem(f"'{name}' is not recomputed in the app: one of {', '.join(shown)}")
        with problems():
            result = self.board.recompute(name, int(images), report=report)
        recomputed = {**recomputed, name: result}
        return recomputed, self.section(name, recomputed)

    def photo_noise(self, image: ImageInput | None, report: Report | None = None) -> go.Figure:
        """Fig 2b on one photo: the drop of each model's top-1 probability under noise, band by band."""
        if not image:
            raise problem("Upload a photo or pick a sample first.")
        with problems():
            return described(self.board.photo_noise(image, report=report))

    @staticmethod
    def export(recomputed: Recomputed) -> Download:
        """Every figure of the tab as PNG (2x) and SVG, titled with its models' weights, in one ZIP."""
        with problems():
            return Download(export.figures_zip(findings.for_slides(findings.sections(recomputed))), "paper-figures.zip")


def _drawn(name: str, recomputed: dict | None) -> Section:
    """Analysis `name`'s section: `recomputed` in the session, or None for the stored results."""
    shown = recomputed or findings.sections({})[name]
    finding = FINDINGS.get(name)
    caption = findings.caption(name, shown, recomputed=recomputed is not None)
    return Section(
        name,
        findings.FIGURES[name].explanation,
        [described(fig, caption) for fig in findings.figures(name, shown)],
        findings.panels(name),
        caption,
        f"Recompute ({finding.figure})" if finding and findings.FIGURES[name].in_app else None,
        finding.images if finding else 0,
    )


@lru_cache(maxsize=None)
def _stored(name: str) -> Section:
    return _drawn(name, None)
