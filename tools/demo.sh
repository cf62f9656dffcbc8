#!/usr/bin/env bash
# Fine-tune the demo's pretrained backbone on single positive labels of the
# embedded dataset (CPU, a few minutes) and print test mAP, CF1 and OF1
# (installs what it needs into .venv on first use).
#   bash tools/demo.sh [CONFIG ...]
# default: the assume-negative baseline and Hill loss,
#   configs/demo/an.py configs/demo/hill.py
# One thread (OMP_NUM_THREADS=1 unless set), as tools/run_tests.sh's
# workers: a thread per core slows a run many times over on a machine
# with other jobs, and gains little on an idle one.
set -e
source "$(dirname "$0")/setup_venv.sh"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
if [ $# -eq 0 ]; then
    set -- configs/demo/an.py configs/demo/hill.py
fi
exec "$PYTHON" tools/demo.py "$@"
