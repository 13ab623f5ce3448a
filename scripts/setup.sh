#!/usr/bin/env bash
# Creates .venv and installs what the app needs; `setup.sh dev` adds the test tools and Chromium. Says each step.
# PyTorch: on a machine without an NVIDIA GPU its CPU-only build is tried first (it leaves out the 2.4 GB of CUDA
# libraries; it needs https://download.pytorch.org), else the default build; VIT_EXPLORER_TORCH=cpu or =default
# chooses.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "[setup] $*"; }
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
PIP=(.venv/bin/pip install -q --disable-pip-version-check)
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
TORCH_BUILD=${VIT_EXPLORER_TORCH:-$(command -v nvidia-smi >/dev/null && echo default || echo cpu)}
if [ "$TORCH_BUILD" = cpu ] && ! .venv/bin/python -c "import torch" 2>/dev/null; then
  say "no NVIDIA GPU: trying PyTorch's CPU-only build (without the 2.4 GB of CUDA libraries)"
  if "${PIP[@]}" --timeout 20 --retries 0 --index-url https://download.pytorch.org/whl/cpu \
    $(grep -E '^(torch|torchvision)==' requirements.txt) 2>/dev/null; then
    say "PyTorch's CPU-only build installed"
  else
    say "the CPU-only build is not offered from here: the default build comes with the rest"
  fi
fi
say "installing the app's Python packages (requirements.txt: PyTorch, timm, captum, Gradio, Streamlit, plotly;"
say "  a first install downloads 3.3 GB with PyTorch's default build, 2.4 GB of it CUDA libraries; a few minutes)"
"${PIP[@]}" -r requirements.txt
if [ "${1:-}" = "dev" ]; then
  say "installing the test tools (requirements-dev.txt: pytest, Playwright, ruff, ...)"
  "${PIP[@]}" -r requirements-dev.txt
  if ! command -v chromium >/dev/null; then
    say "installing Debian's chromium and colour emoji font for the browser tests (apt-get)"
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null
  fi
fi
say "done: .venv holds $(du -sh .venv 2>/dev/null | cut -f1)"
