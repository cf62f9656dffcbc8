#!/usr/bin/env bash
# Create or reuse the project-local virtual environment `.venv` and install
# what the project needs (requirements.txt, then mmlml in editable mode).
# Sourced by tools/demo.sh and tools/run_tests.sh; reinstalls only when
# requirements.txt or setup.py change.
set -e
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
    echo "[mmlml] creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.mmlml-installed"
WANT="$(cat "$ROOT/requirements.txt" "$ROOT/setup.py" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    echo "[mmlml] installing dependencies into $VENV (first use: a few minutes)"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -r "$ROOT/requirements.txt"
    "$VENV/bin/python" -m pip install -q --no-deps --no-build-isolation -e "$ROOT"
    echo "$WANT" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"
