"""The Paper figures tab's back end, shared by the front ends: the stored results of the paper's other
analyses on the bundled CIFAR-10 family (assets/paper_figures.json, written by `python -m engine findings`),
their figures and captions, and recomputing them on the service's model thread.

    board = PaperFindings(service)
    plots = board.figures("hessian")                             # from the stored results, at once
    section = board.recompute("hessian", images=100, report=...) # minutes of CPU, with progress
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

import plotly.graph_objects as go
from PIL import Image

from app.backend.service import Report, Service, on_model_thread
from app.exports import export
from app.views import map_check_plots
from app.views import paper_plots as plots
from app.views import texts as text
from engine.analyses.noise import FrequencyNoise
from engine.data.images import ImageInput
from engine.errors import EngineError
from engine.models.registry import LoadedModel
from engine.paper import map_verdicts
from engine.paper.findings import (
    FIGURE_MEMBERS,
    FINDINGS,
    PAPER_FIGURES,
    STORE,
    compute,
    member_label,
    members,
    outdated,
    quoted_accuracy,
    shown_weights,
)
from engine.paper.verdicts import figure_verdicts

PAIRS = (("step6", "step0"),)  # similarity between two models, besides each model's own
MAX_IMAGES = 1000
Runs = dict[str, dict]  # a section's results by run label, marked where the weights were random


def along_d1(landscape: dict) -> dict:
    """The 1-D landscape along d1 of a 2-D one: its row at d2 = 0 (the same direction, the same points)."""
    row = landscape["y"].index(0.0)
    return {**landscape, "y": None, **{key: landscape[key][row] for key in ("loss", "nll", "accuracy")}}


def _landscapes(runs: Runs) -> list[go.Figure]:
    """The 2-D landscape and, where the grid has d2 = 0, its 1-D slice along d1."""
    if all(0.0 in (result["y"] or []) for result in runs.values()):
        return [plots.landscape_figure(runs), plots.landscape_figure({k: along_d1(r) for k, r in runs.items()})]
    return [plots.landscape_figure(runs)]


def _similarities(runs: Runs) -> list[go.Figure]:
    """One heat map per run: a model against itself, or "A vs B"."""
    pairs = [(label, *label.partition(" vs ")[::2]) for label in runs]
    return [plots.similarity_figure(runs[label], rows, columns or rows) for label, rows, columns in pairs]


def _map_checks(runs: Runs) -> list[go.Figure]:
    """Against random order (deletion and insertion), ROAD's test, all models in one each; then each model's
    randomization test."""
    checked = [map_check_plots.random_order_figure(runs), map_check_plots.road_figure(runs)]
    return [*checked, *(map_check_plots.randomization_figure(label, result) for label, result in runs.items())]


def _overlaid(draw: Callable[[Runs], go.Figure]) -> Callable[[Runs], list[go.Figure]]:
    return lambda runs: [draw(runs)]


@dataclass(frozen=True)
class PaperFigure:
    """How the tab shows one of the paper's figures; engine.paper.findings.PAPER_FIGURES, under the same key, has
    its analysis, and assets/paper_figures.json its stored result."""

    explanation: str  # Markdown above the figures
    draw: Callable[[Runs], list[go.Figure]]
    panels: int = 1  # figure places (a figure per model or pair, or the models overlaid in one)
    per_run: bool = False  # one figure per run, exported with that run's weights
    table: Callable[[dict], str] | None = None  # a Markdown table of the section, in the caption
    in_app: bool = True  # recomputed by the tab's Recompute (else by the command line only: too long for a turn)


FIGURES: dict[str, PaperFigure] = {
    "landscape": PaperFigure(text.FINDINGS["landscape"], _landscapes, panels=2),
    "trajectory": PaperFigure(text.FINDINGS["trajectory"], _overlaid(plots.trajectory_figure)),
    "hessian": PaperFigure(text.FINDINGS["hessian"], _overlaid(plots.hessian_figure)),
    "noise": PaperFigure(text.FINDINGS["noise"], _overlaid(plots.noise_figure)),
    "similarity": PaperFigure(
        text.FINDINGS["similarity"], _similarities, len(FIGURE_MEMBERS) + len(PAIRS), per_run=True
    ),
    "lesion": PaperFigure(
        text.FINDINGS["lesion"],
        lambda runs: [plots.lesion_figure({label: result}) for label, result in runs.items()],
        len(FIGURE_MEMBERS),  # each with its own shading, as in Fig 10b
        per_run=True,
    ),
    "corruption": PaperFigure(text.FINDINGS["corruption"], _overlaid(plots.corruption_figure)),
    "maps": PaperFigure(  # about 30 minutes of two CPU cores: the command line's, not a shared server's turn
        text.FINDINGS["maps"], _map_checks, 2 + len(FIGURE_MEMBERS), table=map_verdicts.table, in_app=False
    ),
}
if set(FIGURES) != set(PAPER_FIGURES):  # a figure added to one registry and not the other fails at import
    raise ImportError(f"paper figures without a view: {set(PAPER_FIGURES) ^ set(FIGURES)}")
ORDER = tuple(PAPER_FIGURES)  # Figs 1a .. 12b


@lru_cache(maxsize=1)
def stored() -> dict:
    """The stored results ({} when the file is missing)."""
    return json.loads(STORE.read_text()) if STORE.is_file() else {}


def _labelled(section: dict) -> Runs:
    """Label: result, marked as random weights where they were."""
    return {
        run["label"]: {**run["result"], "random_weights": run["random_weights"], "model": run["model"]}
        for run in section["models"].values()
    }


def panels(name: str) -> int:
    """How many figure places analysis `name` has."""
    return FIGURES[name].panels


def figures(name: str, section: dict | None) -> list[go.Figure]:
    """The figures of analysis `name` from its stored or recomputed `section` (none without one)."""
    if not section or not section.get("models"):
        return []
    return FIGURES[name].draw(_labelled(section))


def remake(name: str, section: dict) -> str:
    """The command that measures analysis `name` again for every member stored in `section`."""
    members = [key for key in section["models"] if ":" not in key]  # "a:b" is a pair (the default one)
    flags = "".join(f" --model {key}" for key in members) if members != list(FIGURE_MEMBERS) else ""
    return f"python -m engine findings --only {name}{flags}"


def caption(name: str, section: dict | None, recomputed: bool = False) -> str:
    """Markdown under the figures: each model's headline numbers, what they ran on, how they were made."""
    if not section:
        if name in FINDINGS:
            return (
                "Not computed yet: press **Recompute**."
                if FIGURES[name].in_app
                else f"Not computed yet: `{remake(name, {'models': {}})}`."
            )
        return "Not recorded yet: `python scripts/record_trajectories.py` stores what the checkpoints recorded."
    headline = PAPER_FIGURES[name].headline
    images = None if name == "trajectory" else section.get("images")  # a trajectory's points are moments of training
    lines = [model_line(key, run, headline, images) for key, run in section["models"].items()]
    if name == "trajectory":
        runs = "; ".join(f"{run['label']}: {shown_weights(key, run)}" for key, run in section["models"].items())
        notes = [f"\nWeights at {section['options']['points']} moments of training. {runs}."]
    else:
        split = "test" if section["split"] == "test" else "training"
        stored = f"stored on {section.get('date', '?')}; `{remake(name, section)}` remakes it"
        origin = "recomputed in this session" if recomputed else stored
        notes = [f"\n{section['images']} images of the bundled CIFAR-10 {split} subset; {origin}."]
    table = FIGURES[name].table
    if table:  # one verdict per row of the table: the checks and the rule said once, the numbers after
        found = figure_verdicts(name, section)
        first = found[0]
        verdicts = [f"**{first.figure}** ({first.paper}). **Rule**: {first.rule}.", ""]
        verdicts += [f"- **{v.claim}: {v.outcome}** ({v.number}). {v.words}" for v in found]
        numbers = ["", "In numbers (mean per image [95% interval], p):", *(f"- **{v.claim}**: {v.here}" for v in found)]
        return "\n".join([*verdicts, "", table(section), "", *lines, *notes, *numbers, *outdated_note(name, section)])
    verdicts = [f"- {v.inline()}" for v in figure_verdicts(name, section)]
    return "\n".join([*verdicts, "", *lines, *notes, *outdated_note(name, section)])


def model_line(key: str, run: dict, headline: Callable[[dict], str], images: int | None) -> str:
    """'- **ResNet (step 0)** (88.1% on the 10,000 CIFAR-10 test images, mean of 3 seeds): on these 1,000 images,
    clean accuracy 88.2%, ...': the model's one accuracy beside what it measured on the figure's own images."""
    quoted = quoted_accuracy(key, run)
    return (
        f"- **{run['label']}**{f' ({quoted})' if quoted else ''}: "
        f"{f'on these {images:,} images, ' if images else ''}{headline(run['result'])}"
    )


def outdated_note(name: str, section: dict) -> list[str]:
    """A warning, where a member's bundled checkpoint has been retrained since `section` was measured."""
    changed = outdated(section)
    if not changed:
        return []
    which = "; ".join(
        f"{label} measured at {then.removeprefix('trained here: ')}, bundled now: {now.removeprefix('trained here: ')}"
        for label, (then, now) in changed.items()
    )
    remedy = (
        "press **Recompute** to measure the bundled checkpoints"
        if name in FINDINGS
        else "`python scripts/record_trajectories.py` stores the new checkpoints' trajectories"
    )
    return [f"\n**Older checkpoints.** These numbers predate the bundled weights ({which}): {remedy}."]


def weights_line(runs: list[tuple[str, str]]) -> str:
    """'label: weights · ...', or for many runs whose weights differ in one middle part (their accuracy),
    'trained here: 2 epochs, CIFAR-10 test accuracy: ResNet (step 0) 59.1% · AlterNet step 1 58.5% · ...'
    (or 'trained here, CIFAR-10 test accuracy: ResNet (step 0) 15 epochs, 85.4% · ...' where the epochs differ)."""
    texts = [weights for _, weights in runs]
    head = os.path.commonprefix(texts)
    head = head[: head.rfind(" ") + 1]
    tail = os.path.commonprefix([t[len(head) :][::-1] for t in texts])[::-1]
    tail = tail[tail.find(" ") :] if " " in tail else ""
    if len(runs) <= 3 or not head.strip() or not tail.strip():
        return " · ".join(f"{label}: {weights}" for label, weights in runs)
    middles = " · ".join(f"{label} {weights[len(head) : len(weights) - len(tail)]}" for label, weights in runs)
    return f"{head.rstrip(', :')},{tail}: {middles}"


def for_slides(sections: dict[str, dict | None]) -> dict[str, go.Figure]:
    """Every figure of `sections` (analysis name: section) by file name, titled with its models' weights."""
    out = {}
    for name in ORDER:
        section = sections.get(name)
        runs = [(run["label"], shown_weights(key, run)) for key, run in (section or {}).get("models", {}).items()]
        for i, figure in enumerate(figures(name, section)):
            weights = weights_line(runs[i : i + 1] if FIGURES[name].per_run else runs)
            out[f"paper-{name}{f'-{i}' if panels(name) > 1 else ''}"] = export.titled(figure, weights)
    return out


def sections(recomputed: dict[str, dict]) -> dict[str, dict | None]:
    """What the tab shows: each analysis as recomputed in the session, else as stored."""
    return {name: recomputed.get(name) or stored().get("findings", {}).get(name) for name in ORDER}


@dataclass
class PaperFindings:
    """Runs the paper's other analyses on the family through the app's service (its cache and model thread)."""

    service: Service

    def model(self, key: str) -> LoadedModel:
        name, options = members()[key]
        return self.service.load(name, self.service.weights_for(name, **options), **options)

    def own_model(self, key: str) -> LoadedModel:
        """Member `key` for a recompute alone: a copy of the cached model (a few MB), since the recompute lets other
        visitors' jobs go between its batches and the loss landscape moves the weights it reads in place."""
        loaded = self.model(key)
        return replace(loaded, module=copy.deepcopy(loaded.module))

    @on_model_thread
    def recompute(self, name: str, images: int | None = None, report: Report | None = None) -> dict:
        """Analysis `name` of the figure members (and the pairs, for similarity) on `images` subset images."""
        if not FIGURES[name].in_app:
            raise EngineError(f"{name} is recomputed by the command line only: python -m engine findings --only {name}")
        if images is not None and not 10 <= images <= MAX_IMAGES:
            raise EngineError(f"choose 10 to {MAX_IMAGES} images, not {images}")
        runs = [(key, None) for key in FIGURE_MEMBERS] + (list(PAIRS) if name == "similarity" else [])
        report = self.service.boundary(report)  # other visitors' jobs go between its batches; a Stop ends it there
        step = iter(range(len(runs)))

        def progress(label: str):
            index = next(step)
            return lambda done, total: report((index + done / total) / len(runs), f"{label}: {done}/{total}")

        return compute(name, runs, lru_cache(maxsize=None)(self.own_model), images, progress)

    def photo_noise(self, image: ImageInput, report: Report | None = None) -> go.Figure:
        """Fig 2b for one photo: the drop of each model's top-1 probability under noise, band by band (the photo
        decoded here, before the models' turn)."""
        return plots.noise_figure(self._photo_noise(self.service.picture(image), report=report))

    @on_model_thread
    def _photo_noise(self, picture: Image.Image, report: Report | None = None) -> dict[str, dict]:
        results = {}
        for i, key in enumerate(FIGURE_MEMBERS):
            model, label = self.model(key), member_label(key)

            def progress(done: int, total: int, i: int = i, label: str = label) -> None:
                if report:
                    report((i + done / total) / len(FIGURE_MEMBERS), f"{label}: band {done}/{total}")

            result = FrequencyNoise(model).attribute([picture], progress=progress).to_json()
            results[label] = {**result, "random_weights": model.random, "model": members()[key][0]}
        return results
