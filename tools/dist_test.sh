#!/usr/bin/env bash
# Multi-GPU (or multi-node) testing: bash tools/dist_test.sh CONFIG CHECKPOINT GPUS [test.py args]
# Environment: NNODES (1), NODE_RANK (0), PORT (29500), MASTER_ADDR (127.0.0.1).
set -e
CONFIG=$1
CHECKPOINT=$2
GPUS=$3
bash "$(dirname "$0")/dist_launch.sh" test.py "$GPUS" "$CONFIG" "$CHECKPOINT" \
    --launcher pytorch "${@:4}"
