"""Where a test run's CPU goes (not a test): each test's CPU in its test process and in every process that process
started (the Gradio and Streamlit servers, Chromium, commands), read from /proc as the test starts and ends.

    .venv/bin/python bench/cpu_by_test.py [pytest arguments]   # e.g. -n 2 --dist loadfile, or tests/test_tour.py

Runs pytest with this module as a plugin, then prints the test files and the tests that took the most CPU, each
split into the test process, Python servers and commands, and Chromium, with the wall time. The rows go to
test-output/cpu-by-test.jsonl. A server started by a session fixture is counted in the test that first needed it; a
process that ends is counted in the one that waited for it (its parent's reaped time). Chromium's renderers are not
waited for by a process in the tree, so what a browser spent is counted while it runs, and a test that closes one
may show a negative Chromium share: the file totals are what to read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ROWS = ROOT / "test-output" / "cpu-by-test.jsonl"
TICKS = os.sysconf("SC_CLK_TCK")
KINDS = ("tests", "python", "chromium", "other")


@dataclass(frozen=True)
class CpuOfTest:
    """One test's wall time and the CPU seconds taken meanwhile by each kind of process in its process's tree."""

    test: str
    wall: float
    tests: float
    python: float
    chromium: float
    other: float

    @property
    def cpu(self) -> float:
        return self.tests + self.python + self.chromium + self.other


def kind(pid: int, command: bytes) -> str:
    if pid == os.getpid():
        return "tests"
    if b"chrom" in command:
        return "chromium"
    return "python" if b"python" in command or b"streamlit" in command else "other"


def tree_cpu(root: int | None = None) -> dict[str, float]:
    """CPU seconds by kind of `root` (this process) and its living descendants, each with what the processes it
    waited for took."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = defaultdict(list)
    seen: dict[int, tuple[float, bytes]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()[:300]
        except OSError:  # ended meanwhile
            continue
        pid = int(entry.name)
        children[int(fields[1])].append(pid)
        seen[pid] = (sum(int(f) for f in fields[11:15]) / TICKS, command)  # utime stime cutime cstime
    found = dict.fromkeys(KINDS, 0.0)
    todo = [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        if pid in seen:
            seconds, command = seen[pid]
            found[kind(pid, command)] += seconds
    return found


_started: dict[str, tuple[float, dict[str, float]]] = {}


def pytest_runtest_setup(item: pytest.Item) -> None:
    _started[item.nodeid] = (time.monotonic(), tree_cpu())


def pytest_runtest_logfinish(nodeid: str) -> None:
    if nodeid not in _started:
        return
    began, before = _started.pop(nodeid)
    after = tree_cpu()
    row = CpuOfTest(nodeid, time.monotonic() - began, *(after[k] - before[k] for k in KINDS))
    with ROWS.open("a") as out:
        out.write(json.dumps(asdict(row)) + "\n")


def report(rows: list[CpuOfTest], top: int = 25) -> str:
    """The files and the tests that took the most CPU, largest first."""
    files: dict[str, list[CpuOfTest]] = defaultdict(list)
    for row in rows:
        files[row.test.split("::")[0]].append(row)
    totals = [
        CpuOfTest(name, *(sum(getattr(r, f) for r in rs) for f in ("wall", *KINDS))) for name, rs in files.items()
    ]
    header = f"{'':70} {'wall s':>7} {'CPU s':>7} {'tests':>6} {'python':>6} {'chrome':>6} {'other':>6}"
    lines = [f"{len(rows)} tests: {sum(r.cpu for r in rows):.0f} CPU-s in the trees of the test processes", header]
    for title, chosen in (("files", totals), ("tests", rows)):
        lines.append(f"-- {title} --")
        for r in sorted(chosen, key=lambda r: -r.cpu)[:top]:
            shares = " ".join(f"{getattr(r, k):6.0f}" for k in KINDS)
            lines.append(f"{r.test[-70:]:70} {r.wall:7.0f} {r.cpu:7.0f} {shares}")
    return "\n".join(lines)


def main(args: list[str]) -> int:
    ROWS.parent.mkdir(exist_ok=True)
    ROWS.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "bench.cpu_by_test", "-q", *args], cwd=ROOT, env=env)
    rows = [CpuOfTest(**json.loads(line)) for line in ROWS.read_text().splitlines()] if ROWS.exists() else []
    print(report(rows))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
