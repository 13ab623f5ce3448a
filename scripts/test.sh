#!/usr/bin/env bash
# The test command: sets up .venv (and Chromium) on a fresh machine, lints, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
.venv/bin/ruff check .            # lint (pyproject.toml: line length 120)
.venv/bin/ruff format --check .   # formatting
# the tests in TEST_WORKERS processes (2: a 2-core machine's servers and browsers wait on each other half the time),
# each taking a whole test file, whose servers it shares; the 40 slowest are listed, to keep CI short
exec .venv/bin/python -m pytest -q -n "${TEST_WORKERS:-2}" --dist loadfile --durations=40 "$@"
