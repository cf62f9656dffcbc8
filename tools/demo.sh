#!/usr/bin/env bash
# Fine-tune the demo's pretrained backbone on single positive labels of the
# embedded dataset (CPU, a few minutes) and print test mAP, CF1 and OF1
# (installs what it needs into .venv on first use).
#   bash tools/demo.sh [CONFIG ...]
# default: the assume-negative baseline and Hill loss,
#   configs/demo/an.py configs/demo/hill.py
set -e
source "$(dirname "$0")/setup_venv.sh"
if [ $# -eq 0 ]; then
    set -- configs/demo/an.py configs/demo/hill.py
fi
exec python tools/demo.py "$@"
