#!/usr/bin/env bash
# Multi-GPU (or multi-node) testing: bash tools/dist_test.sh CONFIG CHECKPOINT GPUS [test.py args]
# Environment: NNODES (1), NODE_RANK (0), PORT (29500), MASTER_ADDR (127.0.0.1).
exec bash "$(dirname "$0")/dist_run.sh" "$3" test.py "$1" "$2" --launcher pytorch "${@:4}"
