#!/usr/bin/env bash
# System libraries bpy needs to import and render headless, plus real test assets.
# Idempotent; runs as root after `uv sync` (see scripts/setup).
set -euo pipefail

# apt_need comes from scripts/setup: installs what is missing, once.
apt_need libx11-6 libxrender1 libxfixes3 libxi6 libxkbcommon0 libsm6 libice6 libgl1 libegl1 assimp-testmodels

# The bpy 5.0.1 wheel is named cp311 but its WHEEL file says cp39, so uv sees the installed
# copy as incompatible and reinstalls it on every `uv run` (breaking bpy for anything running
# at that moment). Correct the installed tag so the environment stays stable.
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for wheel in "$repo"/.venv/lib/python3.11/site-packages/bpy-*.dist-info/WHEEL; do
    [[ -f "$wheel" ]] && sed -i 's/^Tag: cp39-cp39-/Tag: cp311-cp311-/' "$wheel"
done
true
