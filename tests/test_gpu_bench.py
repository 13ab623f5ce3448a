"""bench/gpu.sh, the one command for every speed table, run for real on the CPU with --quick: each benchmark's JSON
and Markdown table with the machine's versions and at least one timing, and a run stopped by SIGTERM after the
first benchmark keeps what it had measured."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ("engine", "analyze", "curves", "attribution", "train")
COMMAND = ["bash", "bench/gpu.sh", "--device", "cpu", "--quick"]
TIMEOUT_S = 900  # a quick run takes well under a minute on an idle 2-core machine


def timings(row: dict) -> list[float]:
    """Every number in a row that is a measured time or rate (seconds, images/s)."""
    found = []
    for key, value in row.items():
        if isinstance(value, dict):
            found += timings(value)
        elif isinstance(value, float) and key not in ("ratio",):
            found.append(value)
    return found


def load(folder: Path, name: str) -> dict:
    return json.loads((folder / f"{name}.json").read_text())


def test_quick_run_writes_every_table_with_versions_and_timings(tmp_path: Path) -> None:
    out = tmp_path / "results"
    done = subprocess.run([*COMMAND, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name in BENCHMARKS:
        data = load(out, name)
        assert data["status"] == "complete", (name, data["status"], data["errors"])
        assert data["errors"] == []
        machine = data["machine"]
        assert machine["torch"] == torch.__version__ and machine["device"] == "cpu"
        assert machine["card"] and "cuda" in machine and "driver" in machine
        assert data["rows"], name
        assert all(value > 0 for row in data["rows"] for value in timings(row)), data["rows"]
        assert any(timings(row) for row in data["rows"]), name
        table = (out / f"{name}.md").read_text()
        assert f"torch {torch.__version__}" in table
        assert len([line for line in table.splitlines() if line.startswith("| ")]) >= 2  # header and a row
        assert data["title"] in (out / "summary.md").read_text()
    engine = load(out, "engine")["rows"][0]
    assert engine["analysis"] > 0 and engine["ratio"] == engine["analysis"] / engine["forward"]
    assert "done in" in done.stdout


def test_sigterm_after_the_first_benchmark_keeps_what_was_measured(tmp_path: Path) -> None:
    out = tmp_path / "results"
    process = subprocess.Popen(
        [*COMMAND, "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and process.poll() is None:
            if (out / "engine.json").exists() and load(out, "engine")["status"] == "complete":
                break
            time.sleep(0.1)
        assert process.poll() is None, "the run ended before it could be stopped"
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, output[-3000:]
    assert "stopped" in output
    engine = load(out, "engine")
    assert engine["status"] == "complete" and engine["rows"]
    assert "| vit_cifar |" in (out / "engine.md").read_text()
    statuses = {name: load(out, name)["status"] for name in BENCHMARKS if (out / f"{name}.json").exists()}
    assert list(statuses.values()).count("complete") < len(BENCHMARKS), statuses  # it stopped early
    assert "running" not in statuses.values(), statuses
    assert "Status: complete" in (out / "summary.md").read_text()
