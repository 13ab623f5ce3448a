"""The guided tour: the paper's ideas one step at a time, each tested on the Compare tab's own results (the
user's photo and models) or, for AlterNet and robustness, on the bundled family's stored results; each step
says whether the claim holds here, computed from the numbers in its plot.

    tour = TourTab(service)
    step = tour.step(runs, "variance", Look())    # statement, figure, verdict, one thing to try
    tour.export(runs, Look())                     # every step as one handout page, in a ZIP
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from html import escape

import numpy as np
import plotly.graph_objects as go

from app.backend.service import ModelRun, Service
from app.exports import export
from app.exports import paper_findings as findings
from app.tabs import Download, problem, problems
from app.tabs.compare import Look
from app.views import alt_text, evidence, figures
from app.views import texts as text
from app.views import tour as pictures
from app.views.attention import ViewOptions, render, select_map
from app.views.evidence import Verdict
from engine.analyses.attributions import patch_size
from engine.errors import shown as one_line
from engine.paper import buildup, verdicts

KEYS = tuple(text.TOUR)  # patches, where, frequency, variance, answer, alternet, robustness, trust
READS_RUNS = ("patches", "where", "frequency", "variance", "answer", "trust")  # the steps on the Compare tab's results


@dataclass(frozen=True)
class TourStep:
    key: str
    number: int  # 1-based
    title: str
    statement: str  # the paper's claim, Markdown
    figure: go.Figure | None
    image: np.ndarray | None
    verdict: Verdict
    try_this: str

    @property
    def position(self) -> str:
        return f"Step {self.number} of {len(KEYS)}"

    @property
    def progress(self) -> str:
        """The position and the title, for a handout page (on screen the title is the step's heading)."""
        return f"{self.position} · {self.title}"


def index_of(step: str | int | None) -> int:
    """A step's 0-based position from its key, its 1-based number (as text or int), or 0 for anything else."""
    if step in KEYS:
        return KEYS.index(step)
    try:
        number = int(step)
    except (TypeError, ValueError):
        return 0
    return min(max(number, 1), len(KEYS)) - 1


def address(index: int | None) -> str | None:
    """What the page's address names of the tour (its `?step=`), in every front end: the key of the step shown
    (`index`, 0-based) while the tour is shown, so that a teacher can copy a link to it; None (no step) once another
    tab is, so that a reload opens the Compare tab."""
    return None if index is None else KEYS[min(max(int(index), 0), len(KEYS) - 1)]


@dataclass
class TourTab:
    service: Service

    def step(self, runs: list[ModelRun], step: str | int, look: Look = Look()) -> TourStep:
        """Step `step` (key or 1-based number) on `runs` (the Compare tab's analysis; may be empty)."""
        key = KEYS[index_of(step)]
        title, statement, try_this = text.TOUR[key]
        intact = [run.original or run for run in runs]  # the paper's claims are about whole models
        with problems():
            figure, image, verdict = getattr(self, f"_{key}")(intact, look)
        if intact != runs and key in READS_RUNS:
            verdict = Verdict(verdict.holds, f"{verdict.text}\n\n{text.TOUR_INTACT}", verdict.numbers)
        figure = figure and alt_text.described(figure, verdict.text)
        return TourStep(key, KEYS.index(key) + 1, title, statement, figure, image, verdict, try_this)

    def steps(self, runs: list[ModelRun], look: Look = Look()) -> list[TourStep]:
        return [self.step(runs, key, look) for key in KEYS]

    @staticmethod
    def _needs(runs: list[ModelRun]) -> Verdict | None:
        return None if runs else Verdict(None, "Analyze a photo in the Compare tab first: this step reads its results.")

    def _patches(self, runs, look):
        if missing := self._needs(runs):
            return None, None, missing
        for run in runs:
            patch = patch_size(self.service.load(run.result.name, run.weights))
            if patch:
                side = run.image.shape[0] // patch
                reading = (
                    f"{run.result.label} cuts this photo into {side} x {side} = {side * side} patches of "
                    f"{patch} px, and adds a CLS token: {side * side + 1} tokens go into its first block"
                )
                return None, pictures.patch_grid(run.image, patch), Verdict(None, f"**Here**: {reading}.")
        first = runs[0]
        note = f"{first.result.label} has no patches: its first convolutions read {first.image.shape[0]} px squares"
        return None, first.image, Verdict(None, f"**Here**: {note}; add a ViT to see its tokens.")

    def _where(self, runs, look):
        if missing := self._needs(runs):
            return None, None, missing
        results = [run.result for run in runs]
        maps = [np.asarray(render(run, ViewOptions(), look.colormap, look.opacity)[0]) for run in runs]
        row = pictures.labelled_row(maps, [run.result.label for run in runs])
        verdict = evidence.distance_verdict(results)
        if verdict.holds is None:
            verdict = Verdict(None, "**Here**: no model with global attention was analyzed; add a ViT or DeiT.")
        return pictures.distance_figure(results), row, verdict

    def _frequency(self, runs, look):
        if missing := self._needs(runs):
            return None, None, missing
        results = [run.result for run in runs]
        shaded = figures.high_frequency(results, look.shaded_in(results))
        return shaded, None, evidence.unit_verdict(results, "high_freq")

    def _variance(self, runs, look):
        if missing := self._needs(runs):
            return None, None, missing
        results = [run.result for run in runs]
        figure = figures.variance(results, look.log_y, look.shaded_in(results))
        return figure, None, evidence.unit_verdict(results, "variance")

    def _answer(self, runs, look):
        if missing := self._needs(runs):
            return None, None, missing
        results, lenses = [run.result for run in runs], [run.lens for run in runs]
        shaded = figures.answer_curve(results, lenses, look.shaded_in(results))
        return shaded, None, evidence.lens_verdict(results, lenses)

    def _alternet(self, runs, look):
        family = buildup.buildup_runs()  # every bundled seed of every step; the verdict decides on them
        figure = pictures.buildup_figure(*pictures.buildup_points(family))
        return figure, None, evidence.verdict_of([buildup.alternet_verdict(family)])

    def _robustness(self, runs, look):
        section = findings.sections({})["noise"]
        if not section:
            return None, None, Verdict(None, "**Here**: the stored Fig 2b is missing (`python -m engine findings`).")
        verdict = evidence.verdict_of(verdicts.noise(section), "".join(findings.outdated_note("noise", section)))
        return findings.figures("noise", section)[0], None, verdict

    def _trust(self, runs, look):
        """Each model's default map (the one the Compare tab shows first) checked on the photo, once per map (the
        session's run keeps it); then the stored map checks' verdicts over the CIFAR-10 test images."""
        if missing := self._needs(runs):
            return None, None, missing
        options, checks = ViewOptions(), []
        for run in runs:
            values = select_map(run, options).values
            method = options.method_for(run)
            key = options.check_key(run)
            checks.append(self.service.faithfulness(run, key, values, method))
            run.keep(key, checks[-1])  # the Compare tab shows it under the same map
        lines = [
            f"- {run.result.label}'s {found.method} map: {found.line()}"
            + (f" ({text.CHECK_RANDOM})" if run.result.random_weights else "")
            for run, found in zip(runs, checks)
        ]
        section = findings.sections({}).get("maps")
        stored = [
            f"- **{v.claim}: {v.outcome}** ({v.number}). {v.words}" for v in verdicts.figure_verdicts("maps", section)
        ]
        said = "\n".join(
            [text.TRUST_HERE, *lines, "", text.TRUST_STORED.format(images=(section or {}).get("images", 0)), *stored]
        )
        return pictures.trust_figure([run.result for run in runs], checks), None, Verdict(None, said)

    def export(self, runs: list[ModelRun], look: Look = Look(), photo: str = "") -> Download:
        """Every step as one page of a handout (tour.html, and tour.pdf: Chromium's print of it on A4, a page per
        step), with its figure and picture, in one ZIP; `photo` names the photo analyzed (a user's file name: cut to
        one short line here, escaped where it is drawn)."""
        if not runs:
            raise problem("Analyze a photo in the Compare tab first: the tour reads its results.")
        photo = one_line(photo) if photo else ""
        with problems():
            steps = self.steps(runs, look)
            shown = handout_figures(steps, runs, photo)
            pngs = dict(zip((s.key for s, _ in shown), export.images_of([f for _, f in shown], "png")))
            files = {f"figures/tour-{key}.png": data for key, data in pngs.items()}
            for step in steps:
                if step.image is not None:
                    files[f"pictures/tour-{step.key}.png"] = export.png(step.image)
            files["tour.html"] = tour_html(steps, pngs, photo, [run.result.label for run in runs]).encode()
            files["tour.pdf"] = export.print_pdf(files, "tour.html")
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for name, data in files.items():
                    archive.writestr(name, data)
        return Download(buffer.getvalue(), "guided-tour.zip")


def handout_figures(steps: list[TourStep], runs: list[ModelRun], photo: str) -> list[tuple[TourStep, go.Figure]]:
    """Each step's figure for the handout, subtitled with the photo and models it reads, or as stored results."""
    results = [run.result for run in runs]
    return [
        (s, export.titled(s.figure, export.tour_subtitle(s.key in READS_RUNS, results, photo)))
        for s in steps
        if s.figure
    ]


def numbers(verdict: Verdict) -> str:
    """A verdict's statistics for a handout page, folded under 'The numbers' (as on screen)."""
    if not verdict.numbers:
        return ""
    return f"<details><summary>{escape(text.NUMBERS)}</summary>{export.markdown(verdict.numbers)}</details>"


TOUR_CSS = """
@page {size: A4; margin: 10mm}
body {font-family: system-ui, sans-serif; font-size: 8.5pt; line-height: 1.35; color: #111; max-width: 190mm;
  margin: 0 auto; font-variant-ligatures: none}
@media screen {body {margin: 2em auto; padding: 0 1em}}
section + section {break-before: page}
h1 {font-size: 15pt; margin: 0 0 1mm}
h2 {font-size: 12pt; margin: 3mm 0 1.5mm}
p, ul, ol {margin: 0 0 1.5mm}
ul {padding-left: 5mm}
img.wide {display: block; width: 100%; max-height: 108mm; object-fit: contain; object-position: left}
img.pic {display: block; max-width: 100%; max-height: 70mm; margin-bottom: 2mm}
@media print {
  details::details-content {content-visibility: visible; display: block}
  details > summary {list-style: none; font-weight: 600}
}
"""


def tour_html(steps: list[TourStep], pngs: dict[str, bytes], photo: str = "", models: list[str] | None = None) -> str:
    """One page per step (each printed on a page of its own, A4: TOUR_CSS): claim, figure, picture, verdict, and on
    paper the numbers folded on screen; under the title, the photo analyzed and its models."""
    read = f"On {escape(photo or 'the photo')}, analyzed by {escape(', '.join(models or []) or 'the models')}. "
    pages = []
    for step in steps:
        described = escape(alt_text.of(step.figure), quote=True) if step.figure is not None else ""
        figure = f"<img class='wide' src='figures/tour-{step.key}.png' alt='{described}'>" * (step.key in pngs)
        said = escape(alt_text.picture(step.title, step.verdict.text), quote=True)
        picture = f"<img class='pic' src='pictures/tour-{step.key}.png' alt='{said}'>" * (step.image is not None)
        pages.append(
            f"<section><h2>{escape(step.progress)}</h2><p><b>The paper:</b> {escape(step.statement)}</p>"
            f"{picture}{figure}{export.markdown(step.verdict.text)}{numbers(step.verdict)}</section>"
        )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>How do vision transformers work? A guided tour</title>
<style>{TOUR_CSS}</style>
</head><body><h1>How do vision transformers work? A guided tour</h1>
<p>{read}After {escape(export.REFERENCE)}.</p>{"".join(pages)}</body></html>
"""
