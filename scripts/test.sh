#!/usr/bin/env bash
# The test command: sets up .venv (and Chromium) on a fresh machine, lints, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
.venv/bin/ruff check .            # lint (pyproject.toml: line length 120)
.venv/bin/ruff format --check .   # formatting
exec .venv/bin/python -m pytest -q --durations=40 "$@"   # the 40 slowest are listed, to keep CI short
