#!/usr/bin/env bash
# On a lent GPU machine (the device tool's `run`): trains family runs there, all at once on the one GPU, and
# packs each finished run's checkpoint files into $OUT/runs.tgz, for scripts/train_family.py to bundle here.
#   here, once:  mkdir -p .carry && cp ../shared/data/cifar10-jpeg.tar.gz .carry/   (.carry/ is git-ignored)
#   device run:  bash scripts/device_seeds.sh step6:1 step6:2 step0:2     (carry: [".carry"])
#   here, after: tar xzf <files_at>/runs.tgz -C ~/.cache/vit-explorer/family   (mkdir -p it first)
#                python scripts/train_family.py --only step6,step0 --seeds 1,2 --commit
# EPOCHS (default 40) sets the recipe's length. Each run is stopped after LIMIT_S seconds (default 480), so that whatever finished comes back inside the
# device tool's 10-minute limit; an unfinished run's state is lost with the machine.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?the device tool sets OUT}"
PYTHON=${PYTHON:-python3}
export VIT_EXPLORER_STATE=${VIT_EXPLORER_STATE:-/tmp/family} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
"$PYTHON" - <<'PY'  # the data, once for every run
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
from train_family import ensure_data
ensure_data(".data/cifar10-jpeg", Path(".carry/cifar10-jpeg.tar.gz"))
PY
for job in "$@"; do
  timeout "${LIMIT_S:-480}" "$PYTHON" scripts/train_family.py --only "${job%:*}" --seeds "${job#*:}" --epochs "${EPOCHS:-40}" --no-bundle \
    > "$OUT/${job/:/-seed}.log" 2>&1 &
done
wait
cd "$VIT_EXPLORER_STATE" || exit 1
finished=$(ls -- */*.correct.npz 2>/dev/null | sed 's/\.correct\.npz$//')
for run in $finished; do echo "finished: $run ($(grep -o '"test_accuracy": [0-9.]*' "$run.json"))"; done
[ -n "$finished" ] && tar czf "$OUT/runs.tgz" $(for run in $finished; do echo "$run".{safetensors,json,correct.npz}; done)
for log in "$OUT"/*.log; do echo "$log:"; tr "\r" "\n" < "$log" | tail -n 3; done
