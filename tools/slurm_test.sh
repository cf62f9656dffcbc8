#!/usr/bin/env bash
# Testing on a slurm cluster:
#   GPUS=8 bash tools/slurm_test.sh PARTITION JOB_NAME CONFIG CHECKPOINT [test.py args]
# Environment: GPUS (8), GPUS_PER_NODE (8), CPUS_PER_TASK (5), SRUN_ARGS ('').
exec bash "$(dirname "$0")/slurm_run.sh" "$1" "$2" test.py "$3" "$4" \
    --launcher=slurm "${@:5}"
