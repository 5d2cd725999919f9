#!/usr/bin/env bash
# agentsdk.mcp tests: the third-party MCP servers they run for real.
# - npm: @modelcontextprotocol/server-everything, pinned in tests/mcp/package-lock.json (npm ci);
# - PyPI: mcp-server-time and mcp-server-git in their own venv, tests/mcp/.venv
#   (tests/mcp/requirements-servers.txt), so they never become project dependencies.
# Idempotent: each part is rebuilt only when it is missing or its pins changed.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo/tests/mcp"

# apt_need comes from scripts/setup: installs what is missing, once. mcp-server-git needs git.
command -v npm >/dev/null 2>&1 || apt_need npm
command -v git >/dev/null 2>&1 || apt_need git

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

UV="$(command -v uv || echo "python3 -m uv")"
stamp=".venv/.requirements-sha256"
want="$(sha256sum requirements-servers.txt | cut -d' ' -f1)"
if [ ! -x .venv/bin/mcp-server-time ] || [ ! -x .venv/bin/mcp-server-git ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  $UV venv --quiet --allow-existing -p 3.11 .venv
  $UV pip install --quiet --python .venv/bin/python -r requirements-servers.txt
  echo "$want" > "$stamp"
fi
