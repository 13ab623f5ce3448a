"""The Compare tab: analyze a photo with up to four models; per model its top-5, where it looks (with
layer, head and rollout), lesions and Fig 2a; Figs 8 and 9 overlaid; exports for teaching.

    tab = CompareTab(service)
    page = tab.analyze("cat.jpg", ["resnet50", "vit_small_patch16_224"], "", "auto", Look())
    page.columns[0].top5, page.variance    # plain data, laid out by a front end
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from app.backend.service import IG_DEFAULT_STEPS, MAX_MODELS, ModelRun, Report, Service, picked_models
from app.exports import export
from app.tabs import Download, problem, problems
from app.views import evidence, figures
from app.views import texts as text
from app.views.attention import (
    ATTENTION,
    LENS,
    MEAN,
    ViewOptions,
    attention_layers,
    head_choices,
    lens_units,
    render,
    select_map,
)
from app.views.checks import check_line, checked, with_check
from app.views.evidence import known_classes
from app.views.texts import LABEL
from engine.analyses.attributions import METHODS
from engine.errors import shown
from engine.results import ModelResult

DEFAULT_FIGURE = "fig9-variance"  # the figure an export offers first, in every front end


def not_an_image(name: str) -> str:
    """The one line naming a file that is not a readable image, in every front end."""
    return f"{name}: not an image, or a format that cannot be read"


def column_key(kind: str, slot: int, run: ModelRun, analysis: int) -> str:
    """The key of a column control (`kind`: method, target, layer, head, rollout, lesion, ...) for the model
    in `slot` of analysis number `analysis`: it belongs to that model's run, not to the position, so a new
    Analyze starts every column from its own model's defaults (a lesion keeps it: same model, same run)."""
    return f"{kind}_{slot}_{(run.original or run).result.name}_{analysis}"


def attention_controls(rollout: bool, method: str) -> tuple[bool, bool, bool]:
    """Whether the layer, the head and rollout apply to the map: the layer to the recorded attention without
    rollout (rollout spans every layer) and to the logit lens; the head to the attention without rollout;
    rollout to the attention only."""
    attention = not rollout and method == ATTENTION
    return attention or method == LENS, attention, method == ATTENTION


@dataclass(frozen=True)
class CheckShown:
    """What a column shows of its map's check: the button that checks it, or its curves once checked."""

    offered: bool  # the check's button
    curves: go.Figure | None = None  # the map's deletion and insertion curves, once it has been checked


@dataclass(frozen=True)
class Look:
    """How maps and curves are drawn: colours, opacity, the variance axis, whose blocks Figs 8 and 9 shade."""

    colormap: str = "inferno"
    opacity: float = 0.6
    log_y: bool = True
    shaded: int | None = None  # the model (its position) whose MSA and subsampling spans are shaded; None: msa_model

    def shaded_in(self, results: list[ModelResult]) -> int:
        """The position of the model whose spans Figs 8 and 9 shade: as chosen, else `msa_model`'s."""
        chosen = self.shaded
        return chosen if isinstance(chosen, int) and 0 <= chosen < len(results) else figures.msa_model(results)


@dataclass(frozen=True)
class Column:
    """One model's column, ready to lay out."""

    title: str  # Markdown: the model's label, then its weights or the random-weights badge
    random: bool
    top5: dict[str, float]  # label -> probability; with random weights each label carries its probability
    top5_title: str
    map_title: str
    known_classes: str  # under the top-5 of a model with few classes: which, and that any photo gets one of them
    image: np.ndarray  # where it looks, over the image as the model saw it
    caption: str
    layers: int  # attention layers (0: no layer and head controls)
    heads: list[str]
    rollout: bool  # whether a rollout can be shown
    distance: str  # Markdown: the mean attention distance by depth here ("" without global attention)
    units: list[tuple[str, int]]  # (label, block index) of the units a lesion may switch off
    lesion: list[int]
    spectrum: go.Figure  # Fig 2a
    methods: list[str] = field(default_factory=list)  # the attribution methods offered for this model
    not_offered: str = ""  # Markdown: the methods left out, each with the reason
    classes: list[tuple[str, int]] = field(default_factory=list)  # (label, index) of the classes to explain
    options: ViewOptions = ViewOptions()  # what the map shows: method, class, layer, head, rollout
    check: CheckShown = CheckShown(False)  # the map's check: offered, or its curves

    def chosen(
        self,
        method: str | None = None,
        target: int | None = None,
        layer: int | None = None,
        head: str | None = None,
        rollout: bool = False,
        steps: int = IG_DEFAULT_STEPS,
    ) -> ViewOptions:
        """The map the column's controls ask for, each control not set (None) or no longer valid taking the
        column's default: the first method offered, the top-1 class (a class no longer among the top-5, after a
        lesion, too), the last layer, the head mean; rollout only where the model has one."""
        method = method if method in self.methods else self.methods[0] if self.methods else ""
        target = target if target in [index for _, index in self.classes] else None
        if not self.layers:
            return ViewOptions(None, MEAN, False, method, target, steps)
        layer = self.layers if layer is None else min(max(int(layer), 1), self.layers)
        head = head if head in self.heads else MEAN
        return ViewOptions(layer, head, bool(rollout) and self.rollout, method, target, steps)


def limited(picked: list[str]) -> list[str]:
    """The models picked, at most MAX_MODELS, in every front end: a pick past the limit is undone (Streamlit's picker
    refuses it itself)."""
    return list(picked or [])[:MAX_MODELS]


def photo_line(
    photo: str | None, analyzed: str | None, under_way: bool, previous: str = "the previous photo"
) -> str | None:
    """The status line once the photo changes, in every front end: LABEL.stale (the results shown are for
    `previous`) when `photo` (a key for it: its path or digest) is not the photo `analyzed`; None (the line stays as
    it is) before any photo was analyzed (no results are shown, and the line may say why one was refused), for the
    photo analyzed (an upload that ends after its own Analyze has finished), and while an Analyze is under way (a
    photo uploaded as it was pressed is the one analyzed: at its end, the photo is looked at again)."""
    if under_way or not analyzed or photo == analyzed:
        return None
    return LABEL.stale.format(previous=previous)


@dataclass(frozen=True)
class Page:
    """The tab after an analysis or a lesion: the runs to keep in the session, and what they show."""

    runs: list[ModelRun]
    columns: list[Column]
    high_frequency: go.Figure
    variance: go.Figure
    high_frequency_here: str  # Markdown: Fig 8's claims counted on these results
    variance_here: str  # Markdown: Fig 9's
    lens: go.Figure  # when the answer appears (logit lens)
    lens_here: str  # Markdown: from which block each model's answer is its head's top-1
    figure_choices: list[tuple[str, str]] = field(default_factory=list)  # (title, name) of exportable figures
    status: str = ""
    shaded: int = 0  # the model whose spans Figs 8 and 9 shade (Look.shaded_in)
    shade_choices: list[tuple[str, int]] = field(default_factory=list)  # (label, position) for "Shade the blocks of"


SHADE_DEFAULT = -1  # "Shade the blocks of": the model with MSA blocks (figures.msa_model), whatever the order


def shade_choices(runs: list[ModelRun]) -> list[tuple[str, int]]:
    """What "Shade the blocks of" offers: each model by its label (its position), then the default, the model with
    MSA blocks (SHADE_DEFAULT), which a client that sends no choice gets."""
    models = [((run.original or run).result.label, i) for i, run in enumerate(runs)]
    return [*models, (text.SHADE_DEFAULT, SHADE_DEFAULT)]


def image_name(image: object) -> str:
    """A photo as the JSON names it: its file's name (a path's last part, a Gradio file's original name)."""
    if isinstance(image, dict):
        image = image.get("orig_name") or image.get("path") or ""
    return Path(str(image)).name if image else ""


def top5(result: ModelResult) -> dict[str, float]:
    """The first image's top-5; with random weights every probability is near 1/classes, so each label
    shows its probability to two decimals (bars alone would all read 0%)."""
    predictions = result.predictions[0]
    if not result.random_weights:
        return {p.label: p.probability for p in predictions}
    return {f"{p.label} ({p.probability:.2%})": p.probability for p in predictions}


@dataclass
class CompareTab:
    """The Compare tab's decisions, over the app's service."""

    service: Service

    def analyze(
        self,
        image: object,
        checked: list[str],
        typed: str | None,
        weights: str | None,
        look: Look,
        report: Report | None = None,
        name: str = "",
    ) -> Page:
        """Run the checked models and any typed timm names on the photo (bytes named `name`, or a file); the status
        line names the photo, in every front end."""
        if not image:
            raise problem("Upload a photo or pick a sample first.")
        start = time.perf_counter()
        with problems():
            runs = self.service.analyze(image, picked_models(checked, typed), weights, report=report)
        seconds = time.perf_counter() - start
        named = name or (Path(image).name if isinstance(image, (str, Path)) else "")
        on = f" on {shown(named)}" if named else ""
        status = f"Analyzed {len(runs)} model{'s' * (len(runs) > 1)}{on} in {seconds:.1f} s."
        return self.page(runs, look, status)

    def page(
        self,
        runs: list[ModelRun],
        look: Look,
        status: str = "",
        chosen: dict[int, ViewOptions] | None = None,
        report: Report | None = None,
    ) -> Page:
        """Everything the tab shows for `runs`, from stored results: each map as `chosen` for its position
        (a map not computed yet for the run is computed, with progress), else the default map."""
        results, chosen = [run.result for run in runs], chosen or {}
        return Page(
            runs,
            [self.column(run, look, chosen.get(i), report) for i, run in enumerate(runs)],
            figures.high_frequency(results, look.shaded_in(results)),
            figures.variance(results, look.log_y, look.shaded_in(results)),
            evidence.high_frequency_here(results),
            evidence.variance_here(results),
            figures.answer_curve(results, [run.lens for run in runs], look.shaded_in(results)),
            evidence.lens_here(results, [run.lens for run in runs]),
            export.figure_choices(results, lens=any(run.lens for run in runs)),
            status,
            look.shaded_in(results),
            shade_choices(runs),
        )

    def column(
        self, run: ModelRun, look: Look, options: ViewOptions | None = None, report: Report | None = None
    ) -> Column:
        """One model's column, its map as `options` choose it (default: the last layer's head mean, or the
        model's first method); a class no longer among the top-5 (after a lesion) falls back to the top-1."""
        result = run.result
        badge = text.RANDOM_BADGE.format(seed=self.service.seed) if result.random_weights else result.weights
        suffix = " · random weights" if result.random_weights else ""
        layers = attention_layers(run)
        classes = [(f"{p.label} ({p.probability:.1%})", p.index) for p in result.predictions[0]]
        options = options or self.default_view(run)
        if options.target not in [None, *(index for _, index in classes)]:
            options = replace(options, target=None)
        image, caption = self.view(run, options, look, report)
        methods, left_out = self.methods(run)
        return Column(
            title=f"### {result.label}\n{badge}",
            random=result.random_weights,
            top5=top5(result),
            top5_title=f"Top-5 predictions{suffix}",
            known_classes=known_classes(result.name),
            map_title=f"{text.MAP_TITLE}{suffix}",
            image=image,
            caption=caption,
            layers=layers,
            heads=head_choices(run),
            rollout=result.attention is not None and result.attention.rollout is not None,
            distance=evidence.distance_here(result),
            units=list(run.units),
            lesion=list(run.lesion),
            spectrum=figures.fourier_spectrum(result),
            methods=methods,
            not_offered="; ".join(f"**{m}**: {why}" for m, why in left_out),
            classes=classes,
            options=options,
            check=self.check_shown(run, options),
        )

    @staticmethod
    def default_view(run: ModelRun) -> ViewOptions:
        """The map a column shows after an Analyze: the last layer's attention (head mean), or the model's first
        method for the top-1 class."""
        return ViewOptions(layer=attention_layers(run), head=MEAN)

    def methods(self, run: ModelRun) -> tuple[list[str], list[tuple[str, str]]]:
        """The methods offered for `run` (its recorded attention and per-patch logit lens first), and those
        left out with the reason."""
        offered = [ATTENTION] if run.result.attention is not None else []
        offered += [LENS] if lens_units(run) else []
        left_out = []
        for method in METHODS:
            why = self.service.unsupported(run, method)
            if why:
                left_out.append((method, why))
            else:
                offered.append(method)
        return offered, left_out

    def view(
        self, run: ModelRun, options: ViewOptions, look: Look, report: Report | None = None
    ) -> tuple[np.ndarray, str]:
        """One model's map as `options` choose it, and its caption. The recorded attention and the top-1
        Grad-CAM are redraws; another method's map is computed once for the run's photo, model and lesion
        (with progress), kept on the session's run, then redrawn from it."""
        started = time.monotonic()
        if not options.computed(run):
            key = options.key(run)
            with problems():
                run.keep(key, self.service.attribution(run, key.method, key.target, key.steps, report=report))
        when, latest = run.restyled or (0.0, look)
        look = latest if when > started else look  # the colours or opacity changed while it was computed
        image, caption = render(run, options, look.colormap, look.opacity)
        return image, with_check(caption, run, options)

    def restyle(self, run: ModelRun, options: ViewOptions, look: Look) -> tuple[np.ndarray, str] | None:
        """The map as `options` choose it drawn in `look` (other colours, another opacity) without computing
        anything; a map not computed yet gives None, and one being computed is drawn in `look` when done."""
        run.restyled = (time.monotonic(), look)  # on the session's run: a map computed meanwhile is drawn in it
        if not options.computed(run):
            return None
        image, caption = render(run, options, look.colormap, look.opacity)
        return image, with_check(caption, run, options)

    def check(self, run: ModelRun, options: ViewOptions, report: Report | None = None) -> tuple[str, go.Figure, str]:
        """How far the map `options` choose can be trusted: its deletion and insertion against random pixel orders
        (engine.DeletionInsertion, through the service: once per map, under the request's budgets; the map itself
        is not redrawn). The map's caption with the check's line, the curves, and the line alone (a front end shows
        the curves while the caption has it: the map they belong to)."""
        if not options.computed(run):
            raise problem("Draw this map first: the check reads the map shown.")
        selected, key = select_map(run, options), options.check_key(run)
        with problems():
            run.keep(key, self.service.faithfulness(run, key, selected.values, options.method_for(run), report))
        caption = with_check(render(run, options, "inferno", 0.0)[1], run, options)
        return caption, self.checked_curves(run, options), check_line(run, options)

    @classmethod
    def check_shown(cls, run: ModelRun, options: ViewOptions) -> CheckShown:
        """The check of the map `options` choose: its curves once checked, else its button; neither while that map
        is not drawn (a Stop left the previous one), since a check reads the map shown."""
        if not options.computed(run):
            return CheckShown(False)
        curves = cls.checked_curves(run, options)
        return CheckShown(curves is None, curves)

    @staticmethod
    def checked_curves(run: ModelRun, options: ViewOptions) -> go.Figure | None:
        """The deletion and insertion curves of the map `options` choose, once it has been checked (else None)."""
        found = checked(run, options)
        return None if found is None else figures.faithfulness_curves(found, run.result.label)

    def lesion(
        self,
        runs: list[ModelRun],
        slot: int,
        indices: list[int],
        look: Look,
        chosen: ViewOptions | None = None,
        report: Report | None = None,
    ) -> Page:
        """Model `slot` re-run with the units at `indices` switched off (none: the original, exactly), its map
        as `chosen` (the map as it was) on the re-run model."""
        if slot >= len(runs):
            raise problem("Analyze a photo first.")
        with problems():
            changed = self.service.lesioned(runs[slot], indices or [])
        runs = [changed if i == slot else run for i, run in enumerate(runs)]
        return self.page(runs, look, chosen={slot: chosen} if chosen else None, report=report)

    @staticmethod
    def curves(runs: list[ModelRun], look: Look) -> tuple[go.Figure, go.Figure, go.Figure]:
        """Figs 8 and 9 re-drawn from stored results (another axis, or another model's spans shaded)."""
        results = [run.result for run in runs]
        return (
            figures.high_frequency(results, look.shaded_in(results)),
            figures.variance(results, look.log_y, look.shaded_in(results)),
            figures.answer_curve(results, [run.lens for run in runs], look.shaded_in(results)),
        )

    @staticmethod
    def export_figure(runs: list[ModelRun], name: str, fmt: str, look: Look = Look(), photo: str = "") -> Download:
        """Figure `name` (a name of `Page.figure_choices`) as a PNG at 2x or an SVG, titled for slides, drawn
        as on screen (`look`'s variance axis and shaded model), its subtitle naming the `photo` analyzed."""
        if not runs:
            raise problem("Analyze a photo first.")
        lenses = [run.lens for run in runs]
        measured = export.measured_on([photo] if photo else [])
        results = [run.result for run in runs]
        figs = export.paper_figures(results, look.log_y, look.shaded_in(results), lenses, measured)
        if name not in figs or fmt not in ("png", "svg"):
            raise problem(f"no figure {name!r} as {fmt!r}: pick one of {', '.join(figs)} as png or svg")
        with problems():
            return Download(export.images_of([figs[name]], fmt)[0], f"{name}.{fmt}")

    def export_pack(
        self, runs: list[ModelRun], photo_name: str, look: Look, views: list[ViewOptions | None] | None = None
    ) -> Download:
        """Every figure, input, map and value of the analysis, with a handout, as one ZIP: each model's map
        as its `views` entry chose it on screen, Figs 8 and 9 as `look` draws them."""
        if not runs:
            raise problem("Analyze a photo first.")
        for run, view in zip(runs, views or []):
            if view:
                self.view(run, view, look)  # the chosen maps, computed where they are not yet
        with problems():
            pack = export.teaching_pack(
                [run.result for run in runs],
                [runs],
                [shown(photo_name)],  # a user's file name, cut to one short line
                self.service.device_name,
                look.colormap,
                views,
                look.log_y,
                look.shaded_in([run.result for run in runs]),
            )
            return Download(pack.zip(), "teaching-pack.zip")

    def analysis_json(
        self,
        image: object,
        models: object,
        weights: str | None,
        method: str | None = None,
        target: int | None = None,
        faithfulness: bool = False,
    ) -> dict:
        """The /analyze API: exactly the engine CLI's JSON (`python -m engine analyze IMAGE --model ... --json -`)
        for one image and a list of model names; weights a mode or the name of a bundled checkpoint (never a path).
        With an attribution `method`, each model's JSON gets "maps", a list holding the image's map (on its input
        grid) for class `target` (None: its top-1), or "unsupported" with the reason where the method does not
        apply; with `faithfulness`, the map's deletion and insertion beside random pixel orders, and the verdict on
        this photo, under its "faithfulness" (as the CLI's --map M --faithfulness)."""
        if method and method not in METHODS:
            raise problem(f"no attribution method '{shown(method)}': one of {', '.join(METHODS)}")
        if faithfulness and not method:
            raise problem("faithfulness checks a map: give an attribution method too")
        with problems():
            runs = self.service.analyze(image, models, self.service.network_weights(weights))
            out = self.service.analysis_json(runs)
            named = image_name(image)
            for run, model in zip(runs, out["models"] if method else []):
                why = self.service.unsupported(run, method)
                if why:
                    model["maps"] = [{"method": method, "image": named, "unsupported": why}]
                    continue
                chosen = run.result.predictions[0][0].index if target is None else target  # checked by the service
                found = self.service.attribution(run, method, chosen)
                drawn = {"image": named, **found.to_json()}
                if faithfulness:
                    heat = found.map if found.raw is None else found.raw  # signed maps: most positive first
                    key = ViewOptions(method=method, target=found.target).check_key(run)
                    drawn["faithfulness"] = self.service.faithfulness(run, key, heat, method).to_json()
                model["maps"] = [drawn]
            return out
