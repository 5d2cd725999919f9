#!/usr/bin/env bash
# agentsdk-unity: Mono's C# compiler and runtime. The tests compile the bridge core, the Unity
# handlers (against stub assemblies) and a console host with `mcs` (C# 7.2) and run them with
# `mono`; check_csharp() uses `mcs` too. No Unity editor or dotnet is needed (or available).
# Idempotent; runs as root after `uv sync` (see scripts/setup).
set -euo pipefail

# apt_need comes from scripts/setup: installs what is missing, once.
apt_need mono-mcs mono-runtime libmono-system-core4.0-cil libmono-system4.0-cil
command -v mcs >/dev/null && command -v mono >/dev/null
