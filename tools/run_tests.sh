#!/usr/bin/env bash
# Run the test suite (installs what it needs into .venv on first use).
#   bash tools/run_tests.sh                      # every test
#   bash tools/run_tests.sh tests/test_datasets  # a folder or file (pytest args)
set -e
source "$(dirname "$0")/setup_venv.sh"
cd "$(dirname "$0")/.."
exec python -m pytest "$@"
