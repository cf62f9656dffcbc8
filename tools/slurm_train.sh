#!/usr/bin/env bash
# Training on a slurm cluster:
#   GPUS=16 bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG WORK_DIR [train.py args]
# Environment: GPUS (8), GPUS_PER_NODE (8), CPUS_PER_TASK (5), SRUN_ARGS ('').
exec bash "$(dirname "$0")/slurm_run.sh" "$1" "$2" train.py "$3" \
    --work-dir="$4" --launcher=slurm "${@:5}"
