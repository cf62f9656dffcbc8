#!/usr/bin/env bash
# Train a demo on the embedded dataset (CPU, a few minutes) and print its
# test mAP, CF1 and OF1 (installs what it needs into .venv on first use).
#   bash tools/demo.sh [CONFIG ...]      default: configs/demo/an.py
set -e
source "$(dirname "$0")/setup_venv.sh"
exec python tools/demo.py "${@:-configs/demo/an.py}"
