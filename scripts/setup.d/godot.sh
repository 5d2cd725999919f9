#!/usr/bin/env bash
# agentsdk-godot: Godot 3 (headless server + windowed runner), a virtual display for screenshots,
# and the glTF samples the tests import. Idempotent; runs as root.
set -euo pipefail
# apt_need comes from scripts/setup: installs what is missing, once.
apt_need godot3-server godot3-runner xvfb assimp-testmodels
# Godot 3 prints its version and exits with 255; show it without failing the setup.
godot3-server --version || true
