#!/usr/bin/env bash
# Runs a tool of tools/ on GPUS processes per node (torch.distributed.run),
# with the given arguments as they are; dist_train.sh and dist_test.sh call it:
#   bash tools/dist_run.sh GPUS TOOL [TOOL args]
# Environment: NNODES (1), NODE_RANK (0), PORT (29500), MASTER_ADDR (127.0.0.1),
# PYTHON (the project's .venv when it exists, else python), OMP_NUM_THREADS
# (1 with several processes a node, as slurm_run.sh: tools/launch_env.sh).
set -e
GPUS=$1
TOOL=$2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/tools/launch_env.sh"
one_thread_per_process "$GPUS"

PYTHONPATH="$ROOT":$PYTHONPATH \
"$PYTHON" -m torch.distributed.run \
    --nnodes=${NNODES:-1} \
    --node_rank=${NODE_RANK:-0} \
    --master_addr=${MASTER_ADDR:-127.0.0.1} \
    --nproc_per_node=$GPUS \
    --master_port=${PORT:-29500} \
    "$ROOT/tools/$TOOL" "${@:3}"
