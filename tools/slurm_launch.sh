#!/usr/bin/env bash
# srun of a tool of this folder on a slurm cluster (what slurm_train.sh and
# slurm_test.sh run): bash tools/slurm_launch.sh TOOL PARTITION JOB_NAME [TOOL args]
# Environment: GPUS (8), GPUS_PER_NODE (8), CPUS_PER_TASK (5), SRUN_ARGS ('').
set -x
TOOL=$1
PARTITION=$2
JOB_NAME=$3
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
SRUN_ARGS=${SRUN_ARGS:-""}
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
    python -u "$ROOT/tools/$TOOL" "${@:4}"
