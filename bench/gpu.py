"""Every speed table of the project on one machine, in one run: a JSON and a Markdown table per benchmark.

    bash bench/gpu.sh [--device cuda] [--quick] [--out DIR] [--only engine,analyze,curves,attribution,train]

Runs, in this order, each within its own time budget, and starts no item after `--minutes` (7.5):
- engine: bench/engine_speed.py, every registered ImageNet model at batch 1 and 32 (plain forward against the full
  analysis; goal on a GPU: at most 1.05x at batch 32);
- analyze: the /analyze API's work through app.backend.service.Service (analyze, then the JSON), first call and warm;
- curves: bench/curves_speed.py, dataset curves against plain inference at batch 64 over generated JPEGs (goal on
  a GPU: 0.9x or more);
- attribution: every method of engine.analyses.attributions and the one-pass attention analysis, one image;
- train: bench/train_speed.py, step 6 at the paper's width 64 (fp32, bf16, bf16 compiled), then every member of
  the family at width 16 (fp32, bf16).

Files go to `--out` (default bench/results/<card>/): <benchmark>.json and <benchmark>.md, each naming the card,
its driver, torch and CUDA, and summary.md with every table. They are written after every measured row, so a run
stopped by SIGTERM or Ctrl-C (or killed) keeps what it had; a stopped run marks the benchmark it was in
"interrupted". `--archive FILE` also packs the folder into FILE (a .tar.gz) after every write. Items that do not
start within their benchmark's budget are listed as not run. `--quick` measures one small model per benchmark
with one repeat: a check of the script itself (seconds to a minute on a CPU), not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "scripts")]

import curves_speed  # noqa: E402
import engine_speed  # noqa: E402
import train_speed  # noqa: E402

import engine  # noqa: E402
from app.backend.service import DEFAULT_MODELS, SAMPLES, Service  # noqa: E402
from engine.analyses.attributions import METHODS, unsupported  # noqa: E402
from engine.models.registry import resolve_device  # noqa: E402

ATTENTION = "Attention + rollout"  # as bench/attribution_speed.py names it: one recorded pass of the Analyzer
QUICK_MODEL = "vit_cifar"  # the smallest registered model with attention
ORDER = ("engine", "analyze", "curves", "attribution", "train")


@dataclass
class Item:
    """One measured row: `run()` gives its JSON values and its Markdown row."""

    label: str
    run: Callable[[], tuple[dict, str]]


@dataclass
class Benchmark:
    """A table: its items, measured until its budget runs out."""

    name: str
    title: str
    budget_s: float
    header: str
    settings: dict
    items: Callable[[], Iterator[Item]]
    rows: list[dict] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    status: str = "not started"  # running, complete, over budget, interrupted, failed
    seconds: float = 0.0


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], object], device: torch.device) -> float:
    sync(device)
    start = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - start


def machine(device: torch.device) -> dict:
    """The card (or CPU), its driver, and the software the numbers were measured with."""
    cpu = _cpu_name()
    info = {
        "device": str(device),
        "card": torch.cuda.get_device_name(device) if device.type == "cuda" else cpu,
        "driver": None,
        "gpu_memory_gib": None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "timm": _version("timm"),
        "python": platform.python_version(),
        "cpu": cpu,
        "cpu_cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "commit": _command(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    if device.type == "cuda":
        info["driver"] = _command(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
        info["gpu_memory_gib"] = round(torch.cuda.get_device_properties(device).total_memory / 2**30, 1)
    return info


def _cpu_name() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    names = re.findall(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M) if cpuinfo.exists() else []
    return names[0].strip() if names else platform.processor() or platform.machine()


def _command(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else None


def _version(package: str) -> str | None:
    try:
        return __import__(package).__version__
    except ImportError:
        return None


def machine_line(info: dict) -> str:
    card = info["card"] + (f" ({info['gpu_memory_gib']} GiB)" if info["gpu_memory_gib"] else "")
    driver = f", driver {info['driver']}" if info["driver"] else ""
    cuda = f", CUDA {info['cuda']}" if info["device"].startswith("cuda") else ""
    return (
        f"{card}{driver}; torch {info['torch']}{cuda}, timm {info['timm']}; {info['cpu_cores']} CPU cores "
        f"({info['cpu']}), {info['torch_threads']} torch threads; {info['date']}"
        + (f", commit {info['commit']}" if info["commit"] else "")
    )


def rate(value: float) -> str:
    """A rate to three figures at least: 12,345, 123, 1.23."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "machine"


# --- the benchmarks -------------------------------------------------------------------------------------------


def engine_benchmark(device: torch.device, quick: bool) -> Benchmark:
    names = [QUICK_MODEL] if quick else engine_speed.imagenet_models()
    batches = (1, 2) if quick else (1, 32)
    repeats = 1 if quick else 7
    image = engine_speed.photo()

    def items() -> Iterator[Item]:
        for name in names:
            for batch in batches:

                def run(name: str = name, batch: int = batch) -> tuple[dict, str]:
                    model = engine.create_model(name, weights="random", device=device)
                    timing = engine_speed.measure(model, image, batch, repeats)
                    return {**asdict(timing), "ratio": timing.ratio}, timing.row()

                yield Item(f"{name} at batch {batch}", run)

    settings = {"models": names, "batches": list(batches), "repeats": repeats, "seconds": "medians"}
    return Benchmark(
        "engine",
        f"Analysis overhead: plain forward vs the full analysis (bench/engine_speed.py, median of {repeats})",
        20 if quick else 110,
        engine_speed.HEADER,
        settings,
        items,
    )


def analyze_benchmark(device: torch.device, quick: bool) -> Benchmark:
    groups = [(QUICK_MODEL,)] if quick else [*((n,) for n in engine_speed.imagenet_models()), DEFAULT_MODELS]
    repeats = 1 if quick else 5
    photo = next(p for p in SAMPLES if p.name == "cat.jpg")
    service = Service(device=str(device))  # random weights: the hub is never asked

    def items() -> Iterator[Item]:
        for names in groups:

            def run(names: tuple[str, ...] = names) -> tuple[dict, str]:
                def call() -> None:
                    json.dumps(service.analysis_json(service.analyze(photo, list(names), "random")))

                first = timed(call, device)
                warm = statistics.median(timed(call, device) for _ in range(repeats))
                label = " + ".join(names)
                return (
                    {"models": list(names), "first_s": first, "warm_s": warm, "repeats": repeats},
                    f"| {label} | {first:.2f} | {warm * 1e3:.0f} |",
                )

            yield Item(" + ".join(names), run)

    return Benchmark(
        "analyze",
        "/analyze latency through app.backend.service.Service (analyze + its JSON; cat.jpg, random weights)",
        20 if quick else 45,
        "| models | first call, model loaded (s) | warm (ms) |\n|---|---:|---:|",
        {"photo": photo.name, "warm repeats": repeats, "warm": "median"},
        items,
    )


def curves_benchmark(device: torch.device, quick: bool, folder: Path) -> Benchmark:
    names = [QUICK_MODEL] if quick else ["resnet50", "vit_small_patch16_224"]
    count, batch = (8, 4) if quick else (512, 64)
    workers = 0 if quick else min(8, os.cpu_count() or 1)
    runs = 1 if quick else 2

    def items() -> Iterator[Item]:
        data = curves_speed.random_photos(folder, count)
        for name in names:

            def run(name: str = name) -> tuple[dict, str]:
                model = engine.create_model(name, "random", device=device)
                speed = curves_speed.measure(model, data, batch, workers, runs)
                return {**asdict(speed), "ratio": speed.ratio}, speed.row()

            yield Item(name, run)

    return Benchmark(
        "curves",
        f"Dataset curves against plain inference (bench/curves_speed.py, {count} generated 400x300 JPEGs, best of "
        f"{runs})",
        30 if quick else 70,
        curves_speed.HEADER,
        {"models": names, "images": count, "batch": batch, "workers": workers, "runs": runs},
        items,
    )


def attribution_benchmark(device: torch.device, quick: bool) -> Benchmark:
    names = [QUICK_MODEL] if quick else engine.list_models()
    methods = [ATTENTION, "Saliency"] if quick else [ATTENTION, *METHODS]
    repeats = 1 if quick else 3
    photo = engine.load_image(next(p for p in SAMPLES if p.name == "cat.jpg"))

    def items() -> Iterator[Item]:
        for name in names:

            def run(name: str = name) -> tuple[dict, str]:
                model = engine.create_model(name, "random", device=device)
                cells: dict[str, float | None] = {}
                for method in methods:
                    if method == ATTENTION:
                        analysis = None if model.spec.attention is None else engine.Analyzer(model, batch_size=1)
                    else:
                        analysis = None if unsupported(method, model) else METHODS[method](model)
                    if analysis is None:
                        cells[method] = None
                        continue
                    images = [photo] if method == ATTENTION else photo  # the Analyzer takes a list
                    call = lambda a=analysis, images=images: a.attribute(images)  # noqa: E731
                    call()  # warm-up
                    cells[method] = statistics.median(timed(call, device) for _ in range(repeats))
                shown = ["n/a" if s is None else f"{s:.3f}" for s in cells.values()]
                return {"model": name, "seconds": cells}, f"| {model.spec.label} | " + " | ".join(shown) + " |"

            yield Item(name, run)

    return Benchmark(
        "attribution",
        f"Attribution methods at their defaults, one image, seconds (median of {repeats} after a warm-up)",
        20 if quick else 60,
        "| model | " + " | ".join(methods) + " |\n|---|" + "---:|" * len(methods),
        {"models": names, "methods": methods, "repeats": repeats, "image": "cat.jpg"},
        items,
    )


def train_benchmark(device: torch.device, quick: bool) -> Benchmark:
    batch, steps = (4, 1) if quick else (128, 8)
    family = [(member, 16, ["fp32", "bf16"]) for member in train_speed.ORDER]
    plan = [("step6", 64, ["fp32", "bf16", "bf16+compile"]), *family]
    if quick:  # on a CPU, width 64, bf16 without bf16 units and compiling each take minutes
        plan = [("step6", 16, ["fp32"])]
    columns = ["fp32", "bf16", "bf16+compile"]

    def items() -> Iterator[Item]:
        for name, width, variants in plan:

            def run(name: str = name, width: int = width, variants: list[str] = variants) -> tuple[dict, str]:
                speeds: dict[str, dict] = {}
                model_name = ""
                for text in variants:
                    variant = train_speed.Variant.parse(text)
                    module, channels_last, model_name = train_speed.member(name, width)
                    speed = train_speed.images_per_s(module, variant, channels_last, device, batch, steps)
                    speeds[text] = asdict(speed)
                    torch._dynamo.reset()
                cells = []
                for column in columns:
                    speed = speeds.get(column)
                    compiled = f" ({speed['compile_s']:.0f} s to compile)" if speed and "compile" in column else ""
                    cells.append("not run" if speed is None else f"{rate(speed['images_per_s'])}{compiled}")
                shown = None if model_name == "vit_cifar" else width  # the ViT has no base width
                row = {"member": name, "model": model_name, "width": shown, "variants": speeds}
                return row, f"| {name}: {model_name} | {shown or 'n/a'} | " + " | ".join(cells) + " |"

            yield Item(f"{name} at width {width}", run)

    return Benchmark(
        "train",
        f"Training images/s, CIFAR-10-sized random batches of {batch} (bench/train_speed.py, {steps} steps after 2 "
        "warm-up steps)",
        40 if quick else 150,
        "| member | width | " + " | ".join(f"{c} images/s" for c in columns) + " |\n|---|---:|" + "---:|" * 3,
        {"batch": batch, "steps": steps, "plan": [list(p[:2]) + [p[2]] for p in plan]},
        items,
    )


# --- running and saving ---------------------------------------------------------------------------------------


class Writer:
    """Writes each benchmark's JSON and Markdown, and summary.md, into one folder (and the archive)."""

    def __init__(self, out: Path, info: dict, argv: list[str], archive: Path | None) -> None:
        self.out, self.info, self.argv, self.archive = out, info, argv, archive
        out.mkdir(parents=True, exist_ok=True)

    def save(self, bench: Benchmark, benches: list[Benchmark]) -> None:
        data = {
            "benchmark": bench.name,
            "title": bench.title,
            "machine": self.info,
            "settings": bench.settings,
            "status": bench.status,
            "seconds": round(bench.seconds, 1),
            "budget_s": bench.budget_s,
            "rows": bench.rows,
            "not_run": bench.not_run,
            "errors": bench.errors,
            "command": self.argv,
        }
        _write(self.out / f"{bench.name}.json", json.dumps(data, indent=1))
        _write(self.out / f"{bench.name}.md", self.markdown(bench))
        summary = "\n\n".join(self.markdown(b) for b in benches if b.status != "not started")
        _write(self.out / "summary.md", summary)
        if self.archive is not None:
            self.archive.parent.mkdir(parents=True, exist_ok=True)
            _write(self.archive.parent / "summary.md", summary)
            partial = self.archive.with_name(self.archive.name + ".part")
            with tarfile.open(partial, "w:gz") as tar:
                tar.add(self.out, arcname=self.out.name)
            partial.replace(self.archive)

    def markdown(self, bench: Benchmark) -> str:
        lines = [f"### {bench.title}", "", machine_line(self.info), "", bench.header, *bench.lines, ""]
        done = f"{bench.status}, {bench.seconds:.0f} s of a {bench.budget_s:.0f} s budget"
        lines.append(f"Status: {done}.")
        if bench.not_run:
            lines.append(f"Not run (time budget or stop): {', '.join(bench.not_run)}.")
        for error in bench.errors:
            lines.append(f"Failed: {error['item']}: {error['error']}")
        return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".part")
    partial.write_text(text)
    partial.replace(path)


def run_benchmark(bench: Benchmark, benches: list[Benchmark], writer: Writer, deadline: float) -> None:
    """Measure the items of `bench` that start within its budget and before `deadline` (time.perf_counter()),
    saving after each."""
    started = time.perf_counter()
    bench.status = "running"
    writer.save(bench, benches)
    print(f"[{bench.name}] {bench.title}; budget {bench.budget_s:.0f} s", flush=True)
    try:
        for item in bench.items():
            now = time.perf_counter()
            if now - started > bench.budget_s or now > deadline:
                bench.not_run.append(item.label)
                continue
            try:
                row, line = item.run()
            except Exception as exc:  # noqa: BLE001 - one failed item is reported, the others still run
                traceback.print_exc()
                bench.errors.append({"item": item.label, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]})
                print(f"[{bench.name}] {item.label}: FAILED ({bench.errors[-1]['error']})", flush=True)
            else:
                bench.rows.append(row)
                bench.lines.append(line)
                print(f"[{bench.name}] {time.perf_counter() - started:6.1f} s  {line}", flush=True)
            bench.seconds = time.perf_counter() - started
            writer.save(bench, benches)
        bench.status = "over budget" if bench.not_run else "complete"
    except KeyboardInterrupt:
        bench.status = "interrupted"
        raise
    except Exception as exc:  # noqa: BLE001 - the next benchmark still runs
        traceback.print_exc()
        bench.status = "failed"
        bench.errors.append({"item": "(setup)", "error": f"{type(exc).__name__}: {exc}".splitlines()[0]})
    finally:
        bench.seconds = time.perf_counter() - started
        writer.save(bench, benches)
        print(f"[{bench.name}] {bench.status} in {bench.seconds:.0f} s", flush=True)


def stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="cuda (default), cpu, or auto")
    parser.add_argument("--quick", action="store_true", help="one small model, one repeat: checks the script")
    parser.add_argument("--out", type=Path, help="default: bench/results/<card>/")
    parser.add_argument("--only", default=",".join(ORDER), help=f"a comma-separated subset of {','.join(ORDER)}")
    parser.add_argument("--archive", type=Path, help="also pack the results into this .tar.gz after every write")
    parser.add_argument(
        "--minutes", type=float, default=7.5, help="no item starts after this many minutes (default 7.5)"
    )
    args = parser.parse_args()
    device = resolve_device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here (use --device cpu)")
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in ORDER]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}: choose from {', '.join(ORDER)}")
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    if args.quick and device.type == "cpu":
        torch.set_num_threads(1)  # on a busy machine one thread is many times faster than threads that wait
    torch.manual_seed(0)
    info = machine(device)
    out = args.out or ROOT / "bench" / "results" / slug(info["card"] + ("-quick" if args.quick else ""))
    writer = Writer(out, info, sys.argv, args.archive)
    print(f"{machine_line(info)}\nresults in {out}", flush=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        builders = {
            "engine": lambda: engine_benchmark(device, args.quick),
            "analyze": lambda: analyze_benchmark(device, args.quick),
            "curves": lambda: curves_benchmark(device, args.quick, Path(tmp)),
            "attribution": lambda: attribution_benchmark(device, args.quick),
            "train": lambda: train_benchmark(device, args.quick),
        }
        benches = [builders[name]() for name in ORDER if name in chosen]
        try:
            for bench in benches:
                run_benchmark(bench, benches, writer, started + args.minutes * 60)
        except KeyboardInterrupt as stop:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second signal must not cut the last save short
            for bench in benches:
                if bench.status != "not started":
                    bench.status = "interrupted" if bench.status == "running" else bench.status
                    writer.save(bench, benches)
            print(f"stopped ({stop or 'Ctrl-C'}); what was measured is saved in {out}", flush=True)
            return 128 + (signal.SIGTERM if str(stop) else signal.SIGINT)
    print(f"done in {time.perf_counter() - started:.0f} s; results in {out}\n", flush=True)
    print((out / "summary.md").read_text(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
