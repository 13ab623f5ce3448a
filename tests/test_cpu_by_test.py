"""bench/cpu_by_test.py reads a test's CPU from /proc: checked against what the kernel reports through getrusage."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import pytest

from bench.cpu_by_test import CpuOfTest, report, tree_cpu


def used(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def test_this_process_and_a_command_it_waited_for_are_counted_as_getrusage_counts_them():
    before, mine, theirs = tree_cpu(), used(resource.RUSAGE_SELF), used(resource.RUSAGE_CHILDREN)
    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass
    busy = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", busy], check=True)
    after = tree_cpu()
    spent = used(resource.RUSAGE_SELF) - mine + used(resource.RUSAGE_CHILDREN) - theirs
    assert spent > 0.8
    assert after["tests"] - before["tests"] == pytest.approx(spent, abs=0.05)


def test_the_report_puts_the_costliest_file_first():
    rows = [CpuOfTest("tests/a.py::one", 2, 1, 0, 0, 0), CpuOfTest("tests/b.py::two", 1, 0, 1, 2, 0)]
    lines = report(rows).splitlines()
    assert lines[0] == "2 tests: 4 CPU-s in the trees of the test processes"
    files = lines[lines.index("-- files --") + 1 :]
    assert files[0].startswith("tests/b.py") and files[0].split()[1:4] == ["1", "3", "0"]
