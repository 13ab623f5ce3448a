#!/usr/bin/env bash
# The run command: sets up .venv on a fresh machine, then serves the explorer.
#   bash scripts/run.sh [--ui gradio|streamlit] [--host H] [--port N]   (Gradio is the default)
set -euo pipefail
cd "$(dirname "$0")/.."
ui=gradio host=${GRADIO_SERVER_NAME:-127.0.0.1} port=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ui) ui=$2; shift 2 ;;
    --host) host=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    *) echo "usage: bash scripts/run.sh [--ui gradio|streamlit] [--host H] [--port N]" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh
case "$ui" in
  gradio) exec .venv/bin/python -m app.gradio_app --host "$host" --port "${port:-${GRADIO_SERVER_PORT:-7860}}" ;;
  streamlit) exec .venv/bin/python -m streamlit run app/streamlit_server.py --server.address "$host" \
               --server.port "${port:-8501}" --server.headless true ;;
  *) echo "unknown --ui $ui: gradio or streamlit" >&2; exit 2 ;;
esac
