#!/usr/bin/env bash
# Run the test suite (installs what it needs into .venv on first use).
#   bash tools/run_tests.sh [pytest args]
set -e
source "$(dirname "$0")/setup_venv.sh"
exec python -m pytest tests "$@"
