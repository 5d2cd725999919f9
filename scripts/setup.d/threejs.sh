#!/usr/bin/env bash
# agentsdk-threejs: Chromium (driven by Playwright with executable_path) and npm `three`.
# Idempotent; runs as root from scripts/setup after `uv sync`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
fi

cd "$here/tools/threejs"
# npm ci wipes node_modules first: renders running meanwhile (tests, other sessions) would fail,
# so skip it when the locked three is already there.
wanted="$(node -p "require('./package-lock.json').packages['node_modules/three'].version" 2>/dev/null || echo none)"
have="$(node -p "require('./node_modules/three/package.json').version" 2>/dev/null || echo missing)"
if [ "$wanted" != "$have" ] || [ ! -f node_modules/three/build/three.module.js ]; then
    if [ -f package-lock.json ]; then
        npm ci --no-audit --no-fund
    else
        npm install --no-audit --no-fund
    fi
fi
test -f node_modules/three/build/three.module.js
echo "threejs: $(chromium --version 2>/dev/null | head -1); three $(node -p "require('./node_modules/three/package.json').version")"
