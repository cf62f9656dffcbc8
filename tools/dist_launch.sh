#!/usr/bin/env bash
# The torch.distributed launch of dist_train.sh and dist_test.sh:
#   bash tools/dist_launch.sh GPUS TOOL [tool args]
# runs tools/TOOL on GPUS processes per node with the tool args as given.
# Environment: NNODES (1), NODE_RANK (0), PORT (29500), MASTER_ADDR (127.0.0.1).
set -e
GPUS=$1
TOOL=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

PYTHONPATH="$ROOT":$PYTHONPATH \
python -m torch.distributed.run \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    "$ROOT/tools/$TOOL" \
    "${@:3}"
