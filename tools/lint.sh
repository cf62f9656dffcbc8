#!/usr/bin/env bash
# Lint like OpenMMLab projects: flake8, isort, yapf and codespell, then the
# type checker mypy over mmlml/, with the settings of setup.cfg (installs the
# pinned tools into .venv on first use; offline afterwards).
#   bash tools/lint.sh          # check only (what CI runs)
#   bash tools/lint.sh --fix    # rewrite imports and formatting in place
set -e
source "$(dirname "$0")/setup_venv.sh"
PATHS=(mmlml tools tests configs setup.py)
if [ "${1:-}" = "--fix" ]; then
    isort "${PATHS[@]}"
    yapf -i -r "${PATHS[@]}"
fi
status=0
flake8 "${PATHS[@]}" || status=1
isort --check-only --diff "${PATHS[@]}" || status=1
yapf --diff -r "${PATHS[@]}" || status=1
codespell "${PATHS[@]}" README.md docs setup.cfg || status=1
mypy || status=1  # mmlml/, as setup.cfg's [mypy] says
if [ $status -ne 0 ]; then
    echo "[mmlml] lint failed (bash tools/lint.sh --fix repairs imports and" \
         "formatting)" >&2
    exit 1
fi
echo "[mmlml] lint passed"
