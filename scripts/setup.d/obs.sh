#!/usr/bin/env bash
# Observability (trace viewer tests): a Chromium for Playwright to open the viewer page in.
# Idempotent; runs from scripts/setup after `uv sync`.
set -euo pipefail
apt_need chromium
