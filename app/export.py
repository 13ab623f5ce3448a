"""Exports for teaching: every figure as PNG (2x, titled with the models and their weights, sized for
a projector) and SVG, each attention or Grad-CAM overlay as PNG, and a teaching pack: one ZIP with
the figures, the inputs as each model saw them, the maps, the analysis JSON, a per-block CSV and a
one-page HTML handout that opens from the unpacked folder without a server.

    python -m app.export IMAGE... --model NAME [--model NAME ...] [--weights auto] --out pack.zip

Static images come from plotly's own exporter (kaleido), which drives a Chromium or Chrome (export_browser.py).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from PIL import Image

from engine.analyses.logit_lens import LogitLensResult
from engine.errors import shown
from engine.models.placement import Placement
from engine.results import Analysis, ModelResult

from .cifar_lab import LabRun
from .export_browser import EXPORTS, ExportError, browser_path
from .service import ModelRun
from .units import lesion_of
from .views import alt_text, evidence, figures
from .views import texts as text
from .views.attention import ViewOptions, render
from .views.checks import with_check

LENS_FIGURE = "logit-lens"
WIDTH, HEIGHT, SCALE = 1200, 700, 2  # PNGs are 2400 x 1400: sharp on a projector
SUBTITLE_CHARS = 130  # a subtitle line's length at the exported size
REFERENCE = 'Park & Kim, "How Do Vision Transformers Work?", ICLR 2022 (arXiv:2202.06709)'


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


def paper_figures(
    results: list[ModelResult],
    log_y: bool = True,
    shaded: int = 0,
    lenses: list[LogitLensResult | None] | None = None,
    measured: str = "",
) -> dict[str, go.Figure]:
    """Every figure of the compare view, by file stem, titled for slides: Fig 2a per model, Fig 8, Fig 9,
    drawn as on screen (the variance axis, and whose MSA and subsampling spans are shaded), and with
    `lenses` (one photo's) the logit lens; each subtitle says what it was `measured` on ('on cat.jpg'), where
    given, before the models and their weights."""

    def titled_for(fig: go.Figure, shown: list[ModelResult]) -> go.Figure:
        return titled(fig, " · ".join(filter(None, [measured, weights_line(shown)])))

    out = {f"fig2a-{slug(r.name)}": titled_for(figures.fourier_spectrum(r), [r]) for r in results}
    out["fig8-high-frequency"] = titled_for(figures.high_frequency(results, shaded), results)
    out["fig9-variance"] = titled_for(figures.variance(results, log_y, shaded), results)
    if lenses and any(lenses):
        out[LENS_FIGURE] = titled_for(figures.answer_curve(results, lenses, shaded), results)
    return out


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
    from .views.alternet import architecture_svg

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
    with MSA blocks, figures.msa_model)."""
    pack = Pack()
    shaded = figures.msa_model(results) if shaded is None else shaded
    lenses = [run.lens for run in runs[0]] if len(runs) == 1 else None  # one photo's lens
    figs = paper_figures(results, log_y, shaded, lenses, measured_on(image_names))
    with zipfile.ZipFile(io.BytesIO(figures_zip(figs))) as archive:
        for name in archive.namelist():
            pack.files[f"figures/{name}"] = archive.read(name)
    pictures = []
    for image_name, image_runs in zip(image_names, runs):
        for slot, run in enumerate(image_runs):
            stem = f"{slug(image_name)}-{slug(run.result.name)}"
            view = (views[slot] if views and slot < len(views) else None) or ViewOptions()
            overlay, caption = render(run, view, colormap, 0.6)
            caption = alt_text.plain(with_check(caption, run, view))  # its check's line where it was checked
            pack.files[f"inputs/{stem}.png"] = png(run.image)
            pack.files[f"maps/{stem}.png"] = png(overlay)
            pictures.append(Picture(image_name, run.result, f"inputs/{stem}.png", f"maps/{stem}.png", caption))
    pack.files["analysis.json"] = json.dumps(Analysis(results, device).to_json(), indent=1).encode()
    pack.files["blocks.csv"] = blocks_csv(results)
    pack.files["handout.html"] = handout(results, figs, pictures, image_names, lenses).encode()
    return pack


def markdown(source: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt().render(source)


def _top5(result: ModelResult) -> str:
    rows = "".join(f"<li>{escape(p.label)}: {p.probability:.2%}</li>" for p in result.predictions[0])
    return f"<ol class='top5'>{rows}</ol>"


def _picture(picture: Picture) -> str:
    """One model on one image (its own run): input and map, the random-weights warning where it applies,
    the map's caption, the top-5 and the attention distance here."""
    r = picture.result
    warning = f"<p class='warning'>{escape(text.RANDOM_PRINT)}</p>" if r.random_weights else ""
    return (
        f"<figure><img src='{picture.input_path}' alt='{escape(alt_text.photo(picture.image_name), quote=True)}'>"
        f"<img src='{picture.map_path}' alt='{escape(alt_text.map_of(text.MAP_TITLE, picture.caption), quote=True)}'>"
        f"{warning}"
        f"<figcaption><b>{escape(r.label)}</b> on {escape(picture.image_name)}: {escape(picture.caption)}."
        f"{_top5(r)}{escape(evidence.distance_here(r))}</figcaption></figure>"
    )


def _wide(name: str, figs: dict[str, go.Figure]) -> str:
    """Figure `name` across the page, its text alternative saying what it found."""
    return f"<img class='wide' src='figures/{name}.png' alt='{escape(alt_text.of(figs[name]), quote=True)}'>"


def _lens_section(
    results: list[ModelResult], lenses: list[LogitLensResult | None] | None, figs: dict[str, go.Figure]
) -> str:
    return f"{markdown(text.LENS)}{_wide(LENS_FIGURE, figs)}{markdown(evidence.lens_here(results, lenses or []))}"


def handout(
    results: list[ModelResult],
    figs: dict[str, go.Figure],
    pictures: list[Picture],
    image_names: list[str],
    lenses: list[LogitLensResult | None] | None = None,
) -> str:
    """A one-page HTML handout: the maps as chosen on screen with each model's top-5, the figures with the
    explanation texts and what these models show, every file by relative path; nothing about the app's
    controls."""
    rows = "".join(_picture(p) for p in pictures)
    spectra = "".join(_wide(name, figs) for name in figs if name.startswith("fig2a"))
    weights = "".join(
        f"<li><b>{escape(r.label)}</b>: {escape(r.weights)}"
        f"{f' <span class=warning>{escape(text.RANDOM_PRINT)}</span>' if r.random_weights else ''}</li>"
        for r in results
    )
    images = ", ".join(map(escape, image_names))
    averaged = f" Curves averaged over the {len(image_names)} images." if len(image_names) > 1 else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>How do vision transformers work? Handout</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.45}}
img.wide{{width:100%}} figure{{display:inline-block;margin:0 1em 1em 0;width:320px;vertical-align:top}}
figure img{{width:155px;image-rendering:pixelated;margin-right:4px}} figcaption{{font-size:.85em}}
.top5{{margin:.3em 0;padding-left:1.4em}} .warning{{color:#9a3412;font-weight:600;font-size:.85em;margin:.2em 0}}
.reference{{color:#555;font-size:.9em}}</style></head><body>
<h1>How do vision transformers work?</h1>
<p class="reference">After {escape(REFERENCE)}. Made with the ViT explorer on {images}.{averaged}</p>
<h2>Models and weights</h2><ul>{weights}</ul>
{markdown(text.COMPARE_ABOUT)}<div>{rows}</div>
{markdown(text.FOURIER)}{spectra}
{markdown(text.HIGH_FREQUENCY_ABOUT)}{_wide("fig8-high-frequency", figs)}
{markdown(evidence.high_frequency_here(results))}
{markdown(text.VARIANCE)}{_wide("fig9-variance", figs)}
{markdown(evidence.variance_here(results))}
{_lens_section(results, lenses, figs) if LENS_FIGURE in figs else ""}
<h2>Data</h2><p>Every value: <a href="analysis.json">analysis.json</a> (the app's JSON) and
<a href="blocks.csv">blocks.csv</a> (one row per model and block). Vector figures: the .svg files
beside the PNGs in the folder figures.</p>
</body></html>
"""


def main(argv: list[str] | None = None) -> Path:
    import engine
    from engine.errors import EngineError
    from engine.models.registry import resolve_device

    from .service import Service

    p = argparse.ArgumentParser(prog="python -m app.export", description=__doc__.splitlines()[0])
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
