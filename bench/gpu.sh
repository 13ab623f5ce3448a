#!/usr/bin/env bash
# Every speed table on this machine in one run: bench/gpu.py (see its --help), with the repository's .venv when
# there is one, else python3 (the GPU machine's, which holds torch). There, carried wheels in .whl/ (the packages
# its image lacks: captum, and timm at the pinned version) are installed into /tmp/site first, and with $OUT set
# the results are also packed into $OUT/gpu-bench.tar.gz (with $OUT/summary.md) after every row.
#
#   bash bench/gpu.sh --fetch-wheels            # here, once: download those wheels into .whl/ (git-ignored)
#   bash bench/gpu.sh --device cuda             # on the GPU machine: about 6.5 minutes on an H100
#   bash bench/gpu.sh --device cpu --quick      # a check of the script, seconds to a minute
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x .venv/bin/python ]; then python=.venv/bin/python; else python=python3; fi
wheels=(captum timm)
if [ "${1:-}" = --fetch-wheels ]; then
    pins=()
    for name in "${wheels[@]}"; do pins+=("$(grep -i "^$name==" requirements.txt)"); done
    exec "$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl "${pins[@]}"
fi
if [ ! -x .venv/bin/python ] && compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
    python3 -c "import timm" 2>/dev/null || { echo "the carried timm does not import here: using the image's"; rm -rf /tmp/site/timm*; }
fi
extra=()
if [ -n "${OUT:-}" ]; then extra=(--archive "$OUT/gpu-bench.tar.gz"); fi
exec env PYTHONUNBUFFERED=1 "$python" bench/gpu.py "${extra[@]}" "$@"
