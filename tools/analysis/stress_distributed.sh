#!/usr/bin/env bash
# Run every two-process test N times under an artificial CPU load and print
# how many runs failed. Slow (minutes per round): not part of the test suite.
#
#   bash tools/analysis/stress_distributed.sh [N] [LOAD]
#
# N (default 20): rounds; each round runs every two-process test once.
# LOAD (default: the number of CPUs): busy `yes` processes started for the
# whole run and ended on exit. Failing runs are logged to
# $STRESS_LOG_DIR (default: a new temporary directory).
set -u
N=${1:-20}
LOAD=${2:-$(nproc)}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHON=${PYTHON:-"$ROOT/.venv/bin/python"}
LOG_DIR=${STRESS_LOG_DIR:-$(mktemp -d -t stress_distributed.XXXXXX)}
mkdir -p "$LOG_DIR"
# Every test that launches two processes (tools/dist_train.sh CONFIG 2).
TESTS=(
    tests/test_runtime/test_stateful_training.py::test_two_processes_end_with_the_same_state
    tests/test_runtime/test_lifecycle.py::test_two_process_torchrun_on_cpu
)

LOAD_PIDS=()
stop_load() {
    for pid in "${LOAD_PIDS[@]}"; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${LOAD_PIDS[@]}"; do
        wait "$pid" 2>/dev/null
    done
    LOAD_PIDS=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM
for _ in $(seq "$LOAD"); do
    yes > /dev/null &
    LOAD_PIDS+=($!)
done

cd "$ROOT"
runs=0
failures=0
for round in $(seq "$N"); do
    log="$LOG_DIR/round_$round.log"
    "$PYTHON" -m pytest "${TESTS[@]}" -q -rfE -p no:cacheprovider > "$log" 2>&1
    rc=$?
    passed=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | cut -d' ' -f1)
    failed=$(grep -Eo '[0-9]+ (failed|error)' "$log" | \
        awk '{s += $1} END {print s + 0}')
    passed=${passed:-0}
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        failed=1  # pytest itself failed (collection, crash)
    fi
    runs=$((runs + passed + failed))
    failures=$((failures + failed))
    echo "round $round/$N: $passed passed, $failed failed"
    grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /'
done
echo "failures: $failures of $runs runs ($N rounds, load $LOAD; logs in $LOG_DIR)"
