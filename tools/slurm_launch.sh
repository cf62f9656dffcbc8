#!/usr/bin/env bash
# The srun launch of slurm_train.sh and slurm_test.sh:
#   bash tools/slurm_launch.sh PARTITION JOB_NAME TOOL [tool args]
# runs tools/TOOL on GPUS tasks with the tool args as given.
# Environment: GPUS (8), GPUS_PER_NODE (8), CPUS_PER_TASK (5), SRUN_ARGS ('').
set -x
PARTITION=$1
JOB_NAME=$2
TOOL=$3
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
SRUN_ARGS=${SRUN_ARGS:-""}
PY_ARGS=("${@:4}")
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

PYTHONPATH="$ROOT":$PYTHONPATH \
srun -p ${PARTITION} \
    --job-name=${JOB_NAME} \
    --gres=gpu:${GPUS_PER_NODE} \
    --ntasks=${GPUS} \
    --ntasks-per-node=${GPUS_PER_NODE} \
    --cpus-per-task=${CPUS_PER_TASK} \
    --kill-on-bad-exit=1 \
    ${SRUN_ARGS} \
    python -u "$ROOT/tools/$TOOL" "${PY_ARGS[@]}"
