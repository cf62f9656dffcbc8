#!/usr/bin/env bash
# Create or reuse the project-local virtual environment `.venv` and install
# what the project needs (requirements.txt, then mmlml in editable mode).
# Sourced by tools/demo.sh, tools/run_tests.sh and tools/lint.sh; reinstalls
# only when requirements.txt or setup.py change. Afterwards `.venv/bin` is
# first on PATH and PYTHON names its interpreter (unless set:
# tools/launch_env.sh).
#
# The first install downloads PyTorch's CUDA wheels even on a CPU machine
# (README.md, "Quick start": what it costs). A second clone pays it once:
#   MMLML_VENV=/path/to/first/clone/.venv bash tools/run_tests.sh
# makes this clone's `.venv` a thin environment layered on that one: its
# packages are used as they are (a `.pth` file puts its site-packages after
# this environment's own), only what requirements.txt asks and it lacks is
# installed here, and mmlml is this clone's. Its interpreter is the one
# that creates a new `.venv` (else MMLML_BASE_PYTHON, default python3).
set -e
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.mmlml-installed"
WANT="$(cat "$ROOT/requirements.txt" "$ROOT/setup.py" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ]; then
    if [ -n "${MMLML_VENV:-}" ]; then
        [ -x "$MMLML_VENV/bin/python" ] || {
            echo "[mmlml] MMLML_VENV=$MMLML_VENV is not a virtual" \
                 "environment (no bin/python)" >&2
            exit 2
        }
        echo "[mmlml] creating $VENV on the packages of $MMLML_VENV"
        "$MMLML_VENV/bin/python" -m venv "$VENV"
        SHARED_SITE="$("$MMLML_VENV/bin/python" -c \
            'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
        OWN_SITE="$("$VENV/bin/python" -c \
            'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
        echo "$SHARED_SITE" > "$OWN_SITE/mmlml_shared_environment.pth"
        # Its commands (pytest, flake8, torchrun, ...), run by this
        # environment's interpreter.
        for script in "$MMLML_VENV"/bin/*; do
            name=$(basename "$script")
            [ -f "$script" ] && [ ! -e "$VENV/bin/$name" ] || continue
            head -n 1 "$script" | grep -q '^#!.*python' || continue
            sed "1s|.*|#!$VENV/bin/python|" "$script" > "$VENV/bin/$name"
            chmod +x "$VENV/bin/$name"
        done
    else
        echo "[mmlml] creating $VENV"
        "${MMLML_BASE_PYTHON:-python3}" -m venv "$VENV"
    fi
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    # pip's "a new release of pip" notice is not the user's business here.
    export PIP_DISABLE_PIP_VERSION_CHECK=1
    if compgen -G "$VENV/lib/python*/site-packages/mmlml_shared_environment.pth" \
            >/dev/null; then
        echo "[mmlml] installing what is missing into $VENV"
    else
        echo "[mmlml] installing dependencies into $VENV (a first install" \
             "downloads about 6 GB: minutes; README.md, Quick start)"
        "$VENV/bin/python" -m pip install -q --upgrade pip
    fi
    "$VENV/bin/python" -m pip install -q -r "$ROOT/requirements.txt"
    "$VENV/bin/python" -m pip install -q --no-deps --no-build-isolation -e "$ROOT"
    echo "$WANT" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
PYTHON=${PYTHON:-$VENV/bin/python}
source "$ROOT/tools/launch_env.sh"
cd "$ROOT"
