"""The engine's command line (python -m engine) run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
