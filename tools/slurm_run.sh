#!/usr/bin/env bash
# Runs a tool of tools/ as a slurm job step of GPUS tasks, with the given
# arguments as they are; slurm_train.sh and slurm_test.sh call it:
#   GPUS=16 bash tools/slurm_run.sh PARTITION JOB_NAME TOOL [TOOL args]
# Environment: GPUS (8), GPUS_PER_NODE (8), CPUS_PER_TASK (5), SRUN_ARGS (''),
# PYTHON (the project's .venv when it exists, else python; the path must
# be the same on the nodes), OMP_NUM_THREADS (1 with several tasks a node,
# as torchrun and dist_run.sh: tools/launch_env.sh).
set -x
PARTITION=$1
JOB_NAME=$2
TOOL=$3
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
{ set +x; } 2>/dev/null
source "$ROOT/tools/launch_env.sh"
one_thread_per_process $((GPUS < GPUS_PER_NODE ? GPUS : GPUS_PER_NODE))
set -x

PYTHONPATH="$ROOT":$PYTHONPATH \
srun -p ${PARTITION} \
    --job-name=${JOB_NAME} \
    --gres=gpu:${GPUS_PER_NODE} \
    --ntasks=${GPUS} \
    --ntasks-per-node=${GPUS_PER_NODE} \
    --cpus-per-task=${CPUS_PER_TASK:-5} \
    --kill-on-bad-exit=1 \
    ${SRUN_ARGS:-} \
    "$PYTHON" -u "$ROOT/tools/$TOOL" "${@:4}"
