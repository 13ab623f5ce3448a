#!/usr/bin/env bash
# Creates .venv and installs what the app needs; `setup.sh dev` adds the test tools and Chromium. Says each step.
# PyTorch: on a machine without an NVIDIA GPU its CPU-only build is tried first (it leaves out the 1.9 GB of CUDA
# libraries; it needs https://download.pytorch.org), else the default build; VIT_EXPLORER_TORCH=cpu or =default
# chooses.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "[setup] $*"; }
# Python 3.12, as the Hugging Face Space runs it (ZeroGPU takes 3.10 or 3.12; this project's pins need 3.11+):
# $PYTHON, else python3.12 on the PATH, else pyenv's
if [ -z "${PYTHON:-}" ]; then
  for candidate in python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12; do
    if "$candidate" --version >/dev/null 2>&1; then PYTHON=$candidate; break; fi
  done
fi
if [ -z "${PYTHON:-}" ]; then
  echo "[setup] Python 3.12 is needed: python3.12 on the PATH, or set PYTHON (pyenv install 3.12)" >&2
  exit 1
fi
PIP=(.venv/bin/pip install -q --disable-pip-version-check)
if [ -x .venv/bin/python ] && ! .venv/bin/python -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
  say "replacing .venv: it was made with $(.venv/bin/python --version 2>&1), the project runs on Python 3.12"
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
TORCH_BUILD=${VIT_EXPLORER_TORCH:-$(command -v nvidia-smi >/dev/null && echo default || echo cpu)}
if [ "$TORCH_BUILD" = cpu ] && ! .venv/bin/python -c "import torch" 2>/dev/null; then
  say "no NVIDIA GPU: trying PyTorch's CPU-only build (without the 1.9 GB of CUDA libraries)"
  if "${PIP[@]}" --timeout 20 --retries 0 --index-url https://download.pytorch.org/whl/cpu \
    $(grep -E '^(torch|torchvision)==' requirements.txt) 2>/dev/null; then
    say "PyTorch's CPU-only build installed"
  else
    say "the CPU-only build is not offered from here: the default build comes with the rest"
  fi
fi
# pip runs only when a requirements file changed since the last install (a stamp in .venv), so that a start with
# nothing to install says so instead of announcing a download
STAMP=.venv/.installed-${1:-app}
WANTED=$(cat requirements.txt $([ "${1:-}" = dev ] && echo requirements-dev.txt) | sha256sum | cut -c1-16)
if [ "$(cat "$STAMP" 2>/dev/null)" = "$WANTED" ]; then
  say "the Python packages are installed and up to date"
else
  say "installing the app's Python packages (requirements.txt: PyTorch, timm, captum, Gradio, Streamlit, plotly;"
  say "  a first install downloads 2.8 GB with PyTorch's default build, 1.9 GB of it CUDA libraries)"
  "${PIP[@]}" -r requirements.txt
fi
if [ "${1:-}" = "dev" ]; then
  if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANTED" ]; then
    say "installing the test tools (requirements-dev.txt: pytest, Playwright, ruff, ...)"
    "${PIP[@]}" -r requirements-dev.txt
  fi
  if ! command -v chromium >/dev/null; then
    say "installing Debian's chromium and colour emoji font for the browser tests (apt-get)"
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null
  fi
fi
echo "$WANTED" >"$STAMP"
say "done: .venv holds $(du -sh .venv 2>/dev/null | cut -f1)"
