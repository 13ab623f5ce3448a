"""The footprint's fake tensors in one thread after another, and in a forked worker: on a CUDA build of torch 2.11
without a GPU, plain FakeTensorMode crashed the process there (a segmentation fault)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = """
import os, threading, torch
from engine.analyses.budget import ShapesOnly

def trace():
    with ShapesOnly():
        torch.zeros(2, 3) @ torch.zeros(3, 2)

def threads():
    for _ in range(3):
        thread = threading.Thread(target=trace)
        thread.start()
        thread.join()

threads()
child = os.fork()
if child == 0:
    threads()
    os._exit(0)
_, status = os.waitpid(child, 0)
trace()
print("child", status)
"""


def test_fake_tensors_in_threads_and_a_forked_worker_do_not_crash():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "child 0"
