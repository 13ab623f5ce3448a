"""Command line: `python -m engine analyze IMAGE... --model NAME [...] [--map METHOD [--target N] [--faithfulness]]
[--json OUT]`, and the paper's other analyses on the bundled CIFAR-10 family: `python -m engine hessian --model step0
--model vit [--json OUT]`."""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from .analyses.attributions import METHODS, unsupported
from .analyses.block_measures import analyze
from .analyses.dataset_curves import (
    DatasetCurves,
    DatasetResult,
    distributed_device,
    finish_process_group,
    is_main_process,
)
from .analyses.faithfulness import FILLS, DeletionInsertion
from .analyses.logit_lens import LogitLens
from .errors import EngineError
from .models.cifar_family import auto_weights
from .models.registry import LoadedModel, create_model, get_spec, list_models, resolve_device
from .models.weights import hub_reachable
from .models.weights_choice import Weights
from .paper.findings import FIGURE_MEMBERS, FINDINGS, compute, load_member, members
from .results import Analysis, BlockResult


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("analyze", help="measure every block of each model on the images")
    run.add_argument("images", nargs="+", help="image files")
    run.add_argument("--model", action="append", required=True, help=f"one of: {', '.join(list_models())}")
    run.add_argument("--batch-size", type=int, default=16)
    run.add_argument("--map", choices=list(METHODS), help="also draw this attribution map for each model and image")
    run.add_argument("--target", type=int, help="the class the map explains (an index; default: each image's top-1)")
    run.add_argument(
        "--faithfulness",
        action="store_true",
        help="with --map: deletion and insertion of each map beside random pixel orders (engine.DeletionInsertion)",
    )
    run.add_argument(
        "--fill",
        choices=list(FILLS),
        default="blur",
        help="with --faithfulness: what replaces a pixel taken away (road: ROAD's noisy linear imputation, slower)",
    )
    _model_options(run)
    commands.add_parser("models", help="list the registered models")
    curves = commands.add_parser(
        "curves",
        help="Figs 2a, 8 and 9 averaged over a folder or ZIP of images (under torchrun, split across the processes)",
    )
    curves.add_argument("--data", type=Path, required=True, help="a folder (searched recursively) or a ZIP of images")
    curves.add_argument("--model", action="append", required=True, help="a registered model or a timm name")
    curves.add_argument("--limit", type=int, help="the first N images in name order")
    curves.add_argument("--batch-size", type=int, default=64, help="the whole run's batch (split across processes)")
    curves.add_argument(
        "--workers", type=int, default=min(4, os.cpu_count() or 1), help="DataLoader workers per process"
    )
    _model_options(curves)
    everything = commands.add_parser(
        "findings", help="every analysis below for the figure models (the app's stored results)"
    )
    everything.add_argument("--only", default=",".join(FINDINGS), help="comma-separated analyses")
    _finding_options(everything, default_pair=["step6:step0"])
    for finding in FINDINGS.values():
        one = commands.add_parser(finding.name, help=f"{finding.figure}: {finding.title}")
        one.set_defaults(only=finding.name)
        _finding_options(one, default_pair=[])
    return parser


def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--weights",
        default="auto",
        help="auto (the default, as in the app: trained weights where "
        "they can be had, the hub's or a bundled checkpoint, else seeded random, labelled so), "
        "pretrained, random, or a .safetensors path",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for random weights")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    parser.add_argument("--json", type=Path, help="write the results as JSON to this file ('-' for stdout)")


def _finding_options(parser: argparse.ArgumentParser, default_pair: list[str]) -> None:
    choices = ", ".join(members())
    parser.add_argument(
        "--model", action="append", help=f"family member ({choices}); default: {', '.join(FIGURE_MEMBERS)}"
    )
    parser.add_argument(
        "--pair",
        action="append",
        default=default_pair,
        help="similarity between two members, as A:B (e.g. step6:step0)",
    )
    parser.add_argument("--weights", default="pretrained", help="pretrained (the bundled checkpoints) or random")
    parser.add_argument("--images", type=int, help="subset images to use (default: each analysis's own)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    parser.add_argument(
        "--json", type=Path, help="merge the results into this JSON file (the app's is assets/paper_figures.json)"
    )


def block_table(blocks: list[BlockResult]) -> list[str]:
    """Each block's index, name, kind, depth, variance and high-frequency value, one line each."""
    rows = [f"  {'#':>3} {'block':<28} {'kind':<6} {'depth':>6} {'variance':>12} {'high-freq Δlog amp':>19}"]
    return rows + [
        f"  {b.index:>3} {b.name:<28} {b.kind:<6} {b.normalized_depth:>6.3f} {b.variance:>12.5g} {b.high_freq:>19.4f}"
        for b in blocks
    ]


def summary(analysis: Analysis, maps: list[list[dict]] | None = None) -> str:
    lines = [f"device: {analysis.device}"]
    for model, drawn in zip(analysis.models, maps or [[]] * len(analysis.models)):
        lines.append(f"\n{model.label} ({model.name}), weights: {model.weights}, {model.images} image(s)")
        top = ", ".join(f"{p.label} {p.probability:.1%}" for p in model.predictions[0])
        lines.append(f"  top-5 (first image): {top}")
        lines += block_table(model.blocks)
        for found in drawn:
            said = found.get("unsupported") or f"{found['label']} (class {found['target']})"
            lines.append(f"  {found['method']} on {found['image']}: {said}")
            if "faithfulness" in found:
                checked = found["faithfulness"]
                lines.append(f"    {checked['line']}")
                areas = {name: checked[name]["area"] for name in ("deletion", "random_deletion", "insertion")}
                areas["random_insertion"] = checked["random_insertion"]["area"]
                lines.append(
                    "    deletion area {deletion:.3f} (random orders {random_deletion:.3f}), insertion area "
                    "{insertion:.3f} (random orders {random_insertion:.3f})".format(**areas)
                )
    return "\n".join(lines)


def maps_of(
    model: LoadedModel, images: list[str], method: str, target: int | None, check: bool, fill: str = "blur"
) -> list[dict]:
    """`method`'s map of each image on `model` for class `target` (None: its top-1), as JSON, with its deletion and
    insertion beside random orders (pixels taken away to `fill`) when `check`; a method that does not apply says
    why instead."""
    why = unsupported(method, model)
    if why:
        return [{"method": method, "image": Path(image).name, "unsupported": why} for image in images]
    found = []
    for image in images:
        drawn = METHODS[method](model).attribute(image, target)
        out = {"image": Path(image).name, **drawn.to_json()}
        if check:
            heat = drawn.map if drawn.raw is None else drawn.raw  # ranked as drawn: signed maps most positive first
            checked = DeletionInsertion(model, fill=fill).attribute(image, drawn.target, heat=heat, method=method)
            out["faithfulness"] = checked.to_json()
        found.append(out)
    return found


def curves_summary(result: DatasetResult) -> str:
    model = result.model
    lines = [
        f"{model.label} ({model.name}), weights: {model.weights}: {model.images} images of {result.source} "
        f"in {result.batches} batches of {result.batch_size} on {result.processes} process(es), "
        f"{result.seconds:.1f} s ({result.images_per_second:.1f} images/s)"
    ]
    if result.skipped:
        lines.append(f"  skipped {len(result.skipped)} unreadable file(s): {', '.join(result.skipped[:5])}")
    lines += block_table(model.blocks)
    return "\n".join(lines)


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).resolve().parent
    )
    return done.stdout.strip()


def run_findings(args: argparse.Namespace, argv: list[str]) -> int:
    """Run the chosen analyses on the chosen members, print a line each, merge into --json after each."""
    store = json.loads(args.json.read_text()) if args.json and args.json.is_file() else {}
    store.setdefault("findings", {})
    store.update(command="python -m engine " + " ".join(argv), date=date.today().isoformat(), commit=_commit())
    members_ = [(key, None) for key in (args.model or FIGURE_MEMBERS)]
    pairs = [tuple(pair.split(":", 1)) for pair in args.pair]
    bars: list[tqdm] = []

    def progress(label: str):
        bars.append(tqdm(desc=label, unit="step", file=sys.stderr, leave=False, disable=None))

        def update(done: int, total: int) -> None:
            bars[-1].total = total
            bars[-1].update(done - bars[-1].n)

        return update

    def stored(name: str, section: dict) -> None:
        bars[-1].close()
        key, run = list(section["models"].items())[-1]
        print(f"{section['figure']} {name}, {run['label']}: {FINDINGS[name].headline(run['result'])}", flush=True)
        if args.json:
            before = store["findings"].get(name, {})
            store["findings"][name] = {
                **before,
                **section,
                "models": {**before.get("models", {}), key: run},
                **{k: store[k] for k in ("command", "date", "commit")},
            }
            args.json.write_text(json.dumps(store, indent=1))

    for name in args.only.split(","):
        runs = [*members_, *(pairs if name == "similarity" else [])]
        compute(
            name,
            runs,
            lambda key: load_member(key, args.weights, args.device),
            args.images,
            progress,
            lambda section, name=name: stored(name, section),
        )
    return 0


def run_curves(args: argparse.Namespace) -> int:
    """Dataset curves for each model; under torchrun only rank 0 prints and writes."""
    results = []
    try:
        for name in args.model:
            model = create_model(name, weights_of(args)(name), args.seed, distributed_device(args.device))
            bar = tqdm(desc=name, unit="img", file=sys.stderr, disable=None if is_main_process() else True, leave=False)

            def progress(done: int, total: int, bar=bar) -> None:
                bar.total = total
                bar.update(done - bar.n)

            results.append(
                DatasetCurves(model, args.batch_size, args.workers).attribute(args.data, args.limit, progress)
            )
            bar.close()
    except (EngineError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        finish_process_group()
    if not is_main_process():
        return 0
    if args.json is not None:
        text = json.dumps({"device": results[0].device, "models": [r.to_json() for r in results]}, indent=1)
        if str(args.json) == "-":
            print(text)
            return 0
        args.json.write_text(text)
    for result in results:
        print(curves_summary(result))
    return 0


def weights_of(args: argparse.Namespace) -> Callable[[str], Weights]:
    """Each model's weights: `--weights` as given, or for 'auto' what it means for that model (the hub is
    asked once, and only for a model whose trained weights live there)."""
    if args.weights != "auto":
        return lambda name: Weights.parse(args.weights, args.seed)
    online = functools.cache(hub_reachable)

    def resolve(name: str) -> Weights:
        weights = auto_weights(name, online() if get_spec(name).dataset != "cifar10" else False, args.seed)
        if weights.is_random:
            print(
                f"note: {name}: no trained weights here (offline, or none bundled): seeded random weights",
                file=sys.stderr,
            )
        return weights

    return resolve


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    if args.command == "models":
        print("\n".join(list_models()))
        return 0
    if args.command == "curves":
        return run_curves(args)
    if args.command != "analyze":
        try:
            return run_findings(args, argv)
        except (EngineError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    bars: list[tqdm] = []

    def progress(name: str):
        bars.append(tqdm(total=len(args.images), desc=name, unit="image", file=sys.stderr, leave=False, disable=None))
        return lambda done, total: bars[-1].update(done - bars[-1].n)

    if args.faithfulness and not args.map:
        print("error: --faithfulness checks a map: give one with --map", file=sys.stderr)
        return 2
    try:
        weights = weights_of(args)
        results = [
            analyze(args.images, [name], weights(name), args.seed, args.device, args.batch_size, progress).models[0]
            for name in args.model
        ]
        result = Analysis(results, str(resolve_device(args.device)))
        one = len(args.images) == 1  # one photo: each model's logit lens too, as /analyze gives it
        loaded = [create_model(name, weights(name), args.seed, args.device) for name in args.model if args.map or one]
        lenses = [LogitLens(model).attribute(args.images[0]).to_json() for model in loaded] if one else []
        maps = [
            maps_of(model, args.images, args.map, args.target, args.faithfulness, args.fill)
            for model in (loaded if args.map else [])
        ]
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        for bar in bars:
            bar.close()
    if args.json is not None:
        out = result.to_json()
        for model, lens in zip(out["models"], lenses):
            model["logit_lens"] = lens
        for model, drawn in zip(out["models"], maps):
            model["maps"] = drawn
        text = json.dumps(out, indent=1)
        if str(args.json) == "-":
            print(text)
            return 0
        args.json.write_text(text)
    print(summary(result, maps))
    return 0
