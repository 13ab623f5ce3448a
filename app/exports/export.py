"""Exports for teaching: every figure as PNG (2x, titled with the models and their weights, sized for
a projector) and SVG, each attention or Grad-CAM overlay as PNG, and a teaching pack: one ZIP with
the figures, the inputs as each model saw them, the maps, the analysis JSON, a per-block CSV and a
handout: HTML that opens from the unpacked folder without a server, and its print on A4 (handout.pdf: three
pages for one photo).

    python -m app.exports.export IMAGE... --model NAME [--model NAME ...] [--weights auto] --out pack.zip

Static images come from plotly's own exporter (kaleido), which drives a Chromium or Chrome (export_browser.py); the
same browser prints the handout.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import re
import zipfile
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from PIL import Image

from app.backend.cifar_lab import LabRun
from app.backend.service import ModelRun
from app.backend.units import lesion_of
from app.views import alt_text, evidence, figures
from app.views import texts as text
from app.views.attention import DISPLAY_SIZE, ViewOptions, render
from app.views.checks import with_check
from engine.analyses.logit_lens import LogitLensResult
from engine.errors import shown
from engine.models.placement import Placement
from engine.results import Analysis, ModelResult

from .export_browser import EXPORTS, ExportError, browser_path, print_pdf

LENS_FIGURE = "logit-lens"
WIDTH, HEIGHT, SCALE = 1200, 700, 2  # PNGs are 2400 x 1400: sharp on a projector
SUBTITLE_CHARS = 130  # a subtitle line's length at the exported size
REFERENCE = 'Park & Kim, "How Do Vision Transformers Work?", ICLR 2022 (arXiv:2202.06709)'

# The handout, printed on A4 (handout.pdf): a page of maps per photo, then two of curves
PT_MM = 25.4 / 72  # a typographic point in millimetres
MAP_MM, INPUT_MM = 40, 26  # a map's and its input's printed width: four models' maps and words hold on a page
BAR_PX = math.ceil(8 * PT_MM / MAP_MM * DISPLAY_SIZE)  # a map's colour-bar numbers, 8 pt on paper (32 px of 448)
PRINT_FONT = 13  # a handout figure's type, in px of its layout: 7 pt or more at its printed width
SPECTRUM_PX, SPECTRUM_MM = (460, 250), 92  # Fig 2a, two across the page
FIGURE_PX, FIGURE_MM = (500, 420), 100  # Figs 8 and 9 and the logit lens, beside what they show
PRINT_SCALE = 3  # the handout's figures at about 400 dpi
CURVE_PAGES = 2  # Fig 2a and Fig 8; Fig 9, the logit lens and the data


def handout_pages(photos: int) -> int:
    """The printed handout's length: a page of maps and predictions per photo, then the curves' pages."""
    return photos + CURVE_PAGES


def weights_line(results: list[ModelResult]) -> str:
    """'ResNet-50: random (seed 0) · ViT-Ti/16: pretrained (timm, ImageNet-1k)'; a model with units switched off
    says so after its weights, whose accuracy is the intact model's ('AlterNet (CIFAR, ~2 M params): trained here:
    40 epochs, 87.8% CIFAR-10 test accuracy, mean of 3 seeds, as trained; drawn with s3:4 switched off')."""
    parts = []
    for r in results:
        model, lesion = lesion_of(r.label)  # 'AlterNet (CIFAR, ~2 M params)', 's3:4 switched off'
        parts.append(f"{model}: {r.weights}" + (f", as trained; drawn with {lesion}" if lesion else ""))
    return " · ".join(parts)


def _wrap(parts: list[str], width: int) -> list[str]:
    """`parts` joined by " · " into lines of at most about `width` characters, never splitting a part."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return lines


def titled(fig: go.Figure, subtitle: str) -> go.Figure:
    """A copy of `fig` for slides with `subtitle` (the models and their weights) under its title."""
    out = go.Figure(fig)
    title = out.layout.title.text or ""
    lines = _wrap(subtitle.split(" · "), SUBTITLE_CHARS)
    out.update_layout(
        title={
            "text": title + "".join(f"<br><sup>{escape(line)}</sup>" for line in lines),
            "font": {"size": 22},
            "yref": "container",
            "y": 1,
            "yanchor": "top",
            "pad": {"t": 24},
        },
        font={"size": 16},
        width=WIDTH,
        height=HEIGHT,
        margin={"l": 90, "r": 30, "t": 96 + 24 * len(lines), "b": 150},
        legend={"font": {"size": 16}, "y": 0},  # at the foot (container), below the x-axis title
    )
    return out


def images_of(figs: list[go.Figure], fmt: str) -> list[bytes]:
    """PNG (at 2x) or SVG bytes of every figure, from one browser."""
    scale = SCALE if fmt == "png" else 1
    with EXPORTS.open() as browser:
        return [browser.image(fig, fmt, WIDTH, HEIGHT, scale) for fig in figs]


def png(image: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    return buffer.getvalue()


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "image"


@dataclass
class Pack:
    """The files of a teaching pack, by path inside the ZIP."""

    files: dict[str, bytes] = field(default_factory=dict)

    def zip(self) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path, data in self.files.items():
                archive.writestr(path, data)
        return buffer.getvalue()


def blocks_csv(results: list[ModelResult]) -> bytes:
    """One row per model and block: the values of the JSON's `blocks`, the curve ';'-separated."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(
        ["model", "label", "weights", "block", "name", "kind", "normalized_depth", "variance", "high_freq", "fourier"]
    )
    for r in results:
        for b in r.blocks:
            writer.writerow(
                [
                    r.name,
                    r.label,
                    r.weights,
                    b.index,
                    b.name,
                    b.kind,
                    repr(b.normalized_depth),
                    repr(b.variance),
                    repr(b.high_freq),
                    ";".join(map(repr, b.fourier)),
                ]
            )
    return buffer.getvalue().encode()


def compare_figures(
    results: list[ModelResult],
    log_y: bool = True,
    shaded: int = 0,
    lenses: list[LogitLensResult | None] | None = None,
) -> dict[str, tuple[go.Figure, list[ModelResult]]]:
    """Every figure of the compare view as on screen, by file stem, with the results it draws: Fig 2a per model,
    Fig 8, Fig 9 (the variance axis, and whose MSA and subsampling spans are shaded), and with `lenses` (one
    photo's) the logit lens."""
    out = {f"fig2a-{slug(r.name)}": (figures.fourier_spectrum(r), [r]) for r in results}
    out["fig8-high-frequency"] = (figures.high_frequency(results, shaded), results)
    out["fig9-variance"] = (figures.variance(results, log_y, shaded), results)
    if lenses and any(lenses):
        out[LENS_FIGURE] = (figures.answer_curve(results, lenses, shaded), results)
    return out


def paper_figures(
    results: list[ModelResult],
    log_y: bool = True,
    shaded: int = 0,
    lenses: list[LogitLensResult | None] | None = None,
    measured: str = "",
) -> dict[str, go.Figure]:
    """Every figure of the compare view (compare_figures), by file stem, titled for slides; each subtitle says what
    it was `measured` on ('on cat.jpg'), where given, before the models and their weights."""
    return {
        name: titled(fig, " · ".join(filter(None, [measured, weights_line(shown)])))
        for name, (fig, shown) in compare_figures(results, log_y, shaded, lenses).items()
    }


def for_print(fig: go.Figure, size: tuple[int, int]) -> go.Figure:
    """A copy of `fig` laid out `size` px for the printed handout, its type PRINT_FONT px throughout: printed at
    its width in the handout (SPECTRUM_MM, FIGURE_MM), 7 pt or more."""
    out = go.Figure(fig)
    lines = (out.layout.title.text or "").count("<br>") + 1
    line = round(1.3 * (PRINT_FONT + 1))  # a title line's height; plotly raises a title by its lines after the first
    out.update_layout(
        width=size[0],
        height=size[1],
        font={"size": PRINT_FONT},
        title={
            "font": {"size": PRINT_FONT + 1},
            "y": 1,
            "yref": "container",
            "yanchor": "top",
            "pad": {"t": 6 + line * (lines - 1)},
        },
        margin={"l": 58, "r": 16, "t": 14 + line * lines, "b": 40},
        legend={"font": {"size": PRINT_FONT}},
    )
    return out


def handout_figures(
    results: list[ModelResult],
    log_y: bool = True,
    shaded: int = 0,
    lenses: list[LogitLensResult | None] | None = None,
) -> dict[str, go.Figure]:
    """The handout's figures (compare_figures), each laid out for its place on the printed page."""
    return {
        name: for_print(fig, SPECTRUM_PX if name.startswith("fig2a") else FIGURE_PX)
        for name, (fig, _) in compare_figures(results, log_y, shaded, lenses).items()
    }


def print_images(figs: list[go.Figure]) -> list[bytes]:
    """PNG bytes of every figure at its own layout size (for_print), PRINT_SCALE times, from one browser."""
    with EXPORTS.open() as browser:
        return [browser.image(fig, "png", fig.layout.width, fig.layout.height, PRINT_SCALE) for fig in figs]


def measured_on(photos: list[str]) -> str:
    """What a compare view's curves were measured on, for subtitles: 'on cat.jpg' (a user's file name, cut to
    one short line), or 'mean over 3 photos'."""
    if len(photos) == 1:
        return f"on {shown(photos[0])}"
    return f"mean over {len(photos)} photos" if photos else ""


def figures_zip(figs: dict[str, go.Figure], extra: dict[str, bytes] | None = None) -> bytes:
    """A ZIP of every figure as PNG (2x) and SVG, plus `extra` files by name."""
    pack = Pack(dict(extra or {}))
    for fmt in ("png", "svg"):
        for name, data in zip(figs, images_of(list(figs.values()), fmt)):
            pack.files[f"{name}.{fmt}"] = data
    return pack.zip()


def dataset_zip(results: list[ModelResult], device: str, measured: str = "") -> bytes:
    """Dataset curves for slides: Fig 2a per model, Fig 8 and Fig 9 as PNG and SVG (subtitled with what they
    were `measured` on: 'mean over photos.zip'), the JSON and the CSV."""
    analysis = json.dumps(Analysis(results, device).to_json(), indent=1).encode()
    figs = paper_figures(results, measured=measured)
    return figures_zip(figs, {"dataset-curves.json": analysis, "blocks.csv": blocks_csv(results)})


def alternet_figures(run: LabRun, measured: str) -> dict[str, go.Figure]:
    """The AlterNet tab's Fig 8 and Fig 9 for slides, their subtitle saying what they were `measured` on (a
    photo, or a mean over test images) before the models and their weights."""
    subtitle = f"{measured} · {weights_line(run.results)}"
    return {
        "fig8-high-frequency": titled(figures.high_frequency(run.results, shaded=0), subtitle),
        "fig9-variance": titled(figures.variance(run.results, True, shaded=0), subtitle),
    }


def alternet_zip(run: LabRun, placement: Placement, measured: str) -> bytes:
    """The AlterNet tab's figures: Fig 8 and Fig 9 as PNG and SVG, the Fig 11 drawing as SVG."""
    from app.views.alternet import architecture_svg

    figs = alternet_figures(run, measured)
    return figures_zip(figs, {f"fig11-alternet-{placement.tag}.svg": architecture_svg(placement).encode()})


STORED = "the CIFAR-10 models trained for this app, from stored results (not the photo)"


def tour_subtitle(on_photo: bool, results: list[ModelResult], photo: str) -> str:
    """A tour handout figure's subtitle: the photo and the Compare tab's models where the step reads them
    (`on_photo`), else the stored CIFAR-10 results it shows."""
    return f"on {photo or 'the photo'} · {weights_line(results)}" if on_photo else STORED


def figure_choices(results: list[ModelResult], lens: bool = False) -> list[tuple[str, str]]:
    """(title, file stem) of every exportable figure, for pickers (`lens`: with the logit lens)."""
    return (
        [(f"Fig 2a: {r.label}", f"fig2a-{slug(r.name)}") for r in results]
        + [
            ("Fig 8: high-frequency Δ log amplitude", "fig8-high-frequency"),
            ("Fig 9: feature-map variance", "fig9-variance"),
        ]
        + [("When the answer appears (logit lens)", LENS_FIGURE)] * lens
    )


@dataclass(frozen=True)
class Picture:
    """One model on one image in the handout: the input as it saw it, its map, and what they show."""

    image_name: str
    result: ModelResult
    input_path: str
    map_path: str
    caption: str
    check: str = ""  # its check's title and line, where the map shown was checked


def teaching_pack(
    results: list[ModelResult],
    runs: list[list[ModelRun]],
    image_names: list[str],
    device: str,
    colormap: str = "inferno",
    views: list[ViewOptions | None] | None = None,
    log_y: bool = True,
    shaded: int | None = None,
) -> Pack:
    """The pack for `results` (curves, averaged over the images) and `runs` (per image, per model: the input
    as the model saw it and its map, drawn with that model's `views` entry: the layer, head or rollout chosen
    on screen; default its last layer, head mean). Figs 8 and 9 as on screen (`log_y`, `shaded`; None: the model
    with MSA blocks, figures.msa_model). The handout as HTML and as the PDF Chromium prints of it (handout.pdf,
    handout_pages long), its figures laid out for paper under handout/."""
    pack = Pack()
    shaded = figures.msa_model(results) if shaded is None else shaded
    lenses = [run.lens for run in runs[0]] if len(runs) == 1 else None  # one photo's lens
    figs = paper_figures(results, log_y, shaded, lenses, measured_on(image_names))
    with zipfile.ZipFile(io.BytesIO(figures_zip(figs))) as archive:
        for name in archive.namelist():
            pack.files[f"figures/{name}"] = archive.read(name)
    printed = handout_figures(results, log_y, shaded, lenses)
    for name, data in zip(printed, print_images(list(printed.values()))):
        pack.files[f"handout/{name}.png"] = data
    pictures = []
    for image_name, image_runs in zip(image_names, runs):
        for slot, run in enumerate(image_runs):
            stem = f"{slug(image_name)}-{slug(run.result.name)}"
            view = (views[slot] if views and slot < len(views) else None) or ViewOptions()
            overlay, caption = render(run, view, colormap, 0.6, BAR_PX)  # its colour bar readable on paper
            check = alt_text.plain(with_check(caption, run, view)[len(caption) :])  # where it was checked
            pack.files[f"inputs/{stem}.png"] = png(run.image)
            pack.files[f"maps/{stem}.png"] = png(overlay)
            paths = f"inputs/{stem}.png", f"maps/{stem}.png"
            pictures.append(Picture(image_name, run.result, *paths, alt_text.plain(caption), check))
    pack.files["analysis.json"] = json.dumps(Analysis(results, device).to_json(), indent=1).encode()
    pack.files["blocks.csv"] = blocks_csv(results)
    pack.files["handout.html"] = handout(results, printed, pictures, image_names, lenses).encode()
    shown = {name: data for name, data in pack.files.items() if not name.startswith("figures/")}  # what it shows
    pack.files["handout.pdf"] = print_pdf(shown, "handout.html")
    return pack


def markdown(source: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt().render(source)


def sentence(words: str) -> str:
    """`words` ending with one full stop."""
    return words.rstrip().rstrip(".") + "."


def _top5(result: ModelResult) -> str:
    rows = "".join(f"<li>{escape(p.label)}: {p.probability:.2%}</li>" for p in result.predictions[0])
    return f"<ol class='top5'>{rows}</ol>"


def _picture(picture: Picture) -> str:
    """One model on one image (its own run): input and map, then its name and weights, the random-weights warning
    where it applies, the map's caption and its check, the top-5 with the classes the model knows where they are
    few (the CIFAR models' ten), and the attention distance here."""
    r = picture.result
    warning = f"<p class='warning'>{escape(text.RANDOM_PRINT)}</p>" if r.random_weights else ""
    line = picture.check.removeprefix(text.CHECK_TITLE).strip()
    check = f"<p class='check'><b>{escape(text.CHECK_TITLE)}</b> {escape(sentence(line))}</p>" if line else ""
    classes = evidence.known_classes(r.name)
    distance = evidence.distance_here(r)
    said = " ".join(filter(None, [picture.caption, picture.check]))
    return (
        f"<figure><img class='input' src='{picture.input_path}' "
        f"alt='{escape(alt_text.photo(picture.image_name), quote=True)}'>"
        f"<img class='map' src='{picture.map_path}' alt='{escape(alt_text.map_of(text.MAP_TITLE, said), quote=True)}'>"
        f"<figcaption><p class='model'><b>{escape(r.label)}</b> on {escape(picture.image_name)} · "
        f"{escape(r.weights)}</p>{warning}<p>{escape(sentence(picture.caption))}</p>{check}"
        f"<div class='predictions'><b>Top-5:</b> {_top5(r)}"
        f"{f' <span class=classes>{escape(classes)}</span>' if classes else ''}</div>"
        f"{f'<p>{escape(distance)}</p>' if distance else ''}</figcaption></figure>"
    )


def _figure(name: str, figs: dict[str, go.Figure], kind: str = "curve") -> str:
    """Handout figure `name` (handout/), its text alternative saying what it found."""
    return f"<img class='{kind}' src='handout/{name}.png' alt='{escape(alt_text.of(figs[name]), quote=True)}'>"


def _beside(name: str, figs: dict[str, go.Figure], said: str) -> str:
    """Figure `name` with what these models show (Markdown) beside it."""
    return f"<div class='beside'>{_figure(name, figs)}<div>{markdown(said)}</div></div>"


def handout(
    results: list[ModelResult],
    figs: dict[str, go.Figure],
    pictures: list[Picture],
    image_names: list[str],
    lenses: list[LogitLensResult | None] | None = None,
) -> str:
    """The handout in HTML, for A4 paper (handout_pages pages, each begun by a <section>): per photo a page of the
    maps as chosen on screen with each model's top-5; then the figures (`figs`: handout_figures, drawn under
    handout/) with the explanation texts and what these models show. Every file by relative path; nothing about
    the app's controls."""
    photos = []
    for number, name in enumerate(image_names):
        rows = "".join(_picture(p) for p in pictures if p.image_name == name)
        head = (
            f"{markdown(text.COMPARE_ABOUT)}"
            if number == 0
            else f"<h2>Predictions and where each model looks, on {escape(name)}</h2>"
        )
        photos.append(f"<section>{_header(image_names) if number == 0 else ''}{head}{rows}</section>")
    spectra = "".join(_figure(name, figs, "spectrum") for name in figs if name.startswith("fig2a"))
    lens = LENS_FIGURE in figs
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>How do vision transformers work? Handout</title>
<style>{HANDOUT_CSS}</style></head><body>
{"".join(photos)}
<section>{markdown(text.FOURIER)}<div class="spectra">{spectra}</div>
{markdown(text.HIGH_FREQUENCY_ABOUT)}{_beside("fig8-high-frequency", figs, evidence.high_frequency_here(results))}
</section>
<section>{markdown(text.VARIANCE)}{_beside("fig9-variance", figs, evidence.variance_here(results))}
{f"{markdown(text.LENS)}{_beside(LENS_FIGURE, figs, evidence.lens_here(results, lenses or []))}" if lens else ""}
<h2>Data</h2><p>Every value: <a href="analysis.json">analysis.json</a> (the app's JSON) and
<a href="blocks.csv">blocks.csv</a> (one row per model and block). Figures for slides, as PNG and SVG: the
folder figures.</p></section>
</body></html>
"""


def _header(image_names: list[str]) -> str:
    """The handout's title, its reference and what it was made on (each model's weights come with its maps)."""
    images = ", ".join(map(escape, image_names))
    averaged = f" Curves averaged over the {len(image_names)} images." if len(image_names) > 1 else ""
    return (
        "<h1>How do vision transformers work?</h1>"
        f"<p class='reference'>After {escape(REFERENCE)}. Made with the ViT explorer on {images}.{averaged}</p>"
    )


HANDOUT_CSS = f"""
@page {{size: A4; margin: 9mm 10mm}}
body {{font-family: system-ui, sans-serif; font-size: 8pt; line-height: 1.3; color: #111; max-width: 190mm;
  margin: 0 auto; font-variant-ligatures: none}}
@media screen {{body {{margin: 2em auto; padding: 0 1em}}}}
section + section {{break-before: page}}
h1 {{font-size: 14pt; margin: 0 0 1mm}}
h2 {{font-size: 10.5pt; margin: 3mm 0 1mm; break-after: avoid}}
p, ul, ol {{margin: 0 0 1.2mm}}
ul {{padding-left: 4mm}}
.reference {{color: #444}}
figure {{display: flex; gap: 3mm; margin: 0 0 2.5mm; break-inside: avoid}}
figure img.input {{width: {INPUT_MM}mm; height: {INPUT_MM}mm; image-rendering: pixelated}}
figure img.map {{width: {MAP_MM}mm; align-self: flex-start}}
figcaption {{flex: 1; font-size: 7.5pt; line-height: 1.25}}
figcaption p, .predictions {{margin: 0 0 .7mm}}
ol.top5 {{display: inline; margin: 0; padding: 0; list-style: none; counter-reset: top}}
ol.top5 li {{display: inline; counter-increment: top}}
ol.top5 li::before {{content: counter(top) ". "}}
ol.top5 li + li::before {{content: " · " counter(top) ". "}}
.classes {{color: #444}}
.warning {{color: #9a3412; font-weight: 600}}
.spectra {{display: grid; grid-template-columns: 1fr 1fr; gap: 2mm 4mm; margin-bottom: 2mm}}
img.spectrum {{width: {SPECTRUM_MM}mm; break-inside: avoid}}
.beside {{display: flex; gap: 4mm; align-items: flex-start}}
img.curve {{width: {FIGURE_MM}mm; flex: none; break-inside: avoid}}
.beside ul {{margin-top: 0}}
"""


def main(argv: list[str] | None = None) -> Path:
    import engine
    from app.backend.service import Service
    from engine.errors import EngineError
    from engine.models.registry import resolve_device

    p = argparse.ArgumentParser(prog="python -m app.exports.export", description=__doc__.splitlines()[0])
    p.add_argument("images", nargs="+", help="one or more photos: the curves are averaged over them")
    p.add_argument("--model", action="append", required=True, help="a registry name; repeat for more models")
    p.add_argument("--weights", default="auto", help="auto, pretrained, random or a checkpoint path")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto")
    p.add_argument("--colormap", default="inferno")
    p.add_argument("--out", type=Path, default=Path("teaching-pack.zip"))
    args = p.parse_args(argv)
    service = Service.start(seed=args.seed, device=args.device)
    try:
        browser_path()
        runs = [service.analyze(image, args.model, args.weights) for image in args.images]
        if len(args.images) == 1:
            results = [run.result for run in runs[0]]
        else:
            pictures = [engine.load_image(image) for image in args.images]
            loaded = [service.load(run.result.name, run.weights) for run in runs[0]]
            results = [service.call(engine.Analyzer(model).attribute, pictures) for model in loaded]
        device = str(resolve_device(args.device))
        names = [Path(image).name for image in args.images]
        args.out.write_bytes(teaching_pack(results, runs, names, device, args.colormap).zip())
    except (EngineError, ExportError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")
    return args.out


if __name__ == "__main__":
    main()
