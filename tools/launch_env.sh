#!/usr/bin/env bash
# What every launcher of tools/ runs with, defined once (sourced by
# dist_run.sh, slurm_run.sh and setup_venv.sh):
#   PYTHON    the interpreter: $PYTHON when set (as MMPretrain's launchers
#             take it), else the project's environment .venv/bin/python
#             when it exists, else `python` on PATH;
#   one_thread_per_process N
#             with N processes on a node and OMP_NUM_THREADS unset, export
#             OMP_NUM_THREADS=1 (torchrun's own rule): dist_*.sh and
#             slurm_*.sh then run the same thread count, so the same seed
#             ends with the same weights, and N processes do not each
#             start a thread per core of the node. MKL_NUM_THREADS, unless
#             set, is 1 too: what MMEngine sets in a distributed run, with
#             a warning from every process.
LAUNCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$LAUNCH_ROOT/.venv/bin/python" ]; then
        PYTHON="$LAUNCH_ROOT/.venv/bin/python"
    else
        PYTHON=python
    fi
fi

one_thread_per_process() {
    if [ "${1:-1}" -gt 1 ]; then
        export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
        export MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
    fi
}
