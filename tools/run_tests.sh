#!/usr/bin/env bash
# Run the test suite (installs what it needs into .venv on first use).
#   bash tools/run_tests.sh                      # every test, on 2 workers
#   bash tools/run_tests.sh tests/test_datasets  # a folder or file (pytest args)
#   bash tools/run_tests.sh -n 0 tests/...       # in this process (pdb, -s)
#   bash tools/run_tests.sh -m "not slow"        # without the slowest tests
# Without -n among the arguments, the tests run on two pytest-xdist
# workers; on workers (any -n but -n 0) each runs one thread
# (OMP_NUM_THREADS=1 unless set).
set -e
source "$(dirname "$0")/setup_venv.sh"
cd "$(dirname "$0")/.."
WORKERS=(-n 2 --dist worksteal)
ONE_PROCESS=0
previous=
for arg in "$@"; do
    case "$arg" in
        -n|--numprocesses) WORKERS=() ;;
        -n0|--numprocesses=0) WORKERS=(); ONE_PROCESS=1 ;;
        -n*|--numprocesses=*) WORKERS=() ;;
        0) if [ "$previous" = -n ] || [ "$previous" = --numprocesses ]; then
               ONE_PROCESS=1
           fi ;;
    esac
    previous=$arg
done
if [ "$ONE_PROCESS" = 0 ]; then
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fi
exec "$PYTHON" -m pytest "${WORKERS[@]}" "$@"
