#!/usr/bin/env bash
# Creates .venv and installs what the app needs; `setup.sh dev` adds the test tools and Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
if [ "${1:-}" = "dev" ]; then
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
  if ! command -v chromium >/dev/null; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null
  fi
else
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
fi
