#!/usr/bin/env bash
# agentsdk-godot: Godot 3 (headless server + windowed runner), a virtual display for screenshots,
# and the glTF samples the tests import. Idempotent; runs as root.
set -euo pipefail
packages=(godot3-server godot3-runner xvfb xauth assimp-testmodels)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
# Godot 3 prints its version and exits with 255; show it without failing the setup.
godot3-server --version || true
