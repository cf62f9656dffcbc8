#!/usr/bin/env bash
# Multi-GPU (or multi-node) training: bash tools/dist_train.sh CONFIG GPUS [train.py args]
# Environment: NNODES (1), NODE_RANK (0), PORT (29500), MASTER_ADDR (127.0.0.1).
exec bash "$(dirname "$0")/dist_run.sh" "$2" train.py "$1" --launcher pytorch "${@:3}"
