#!/usr/bin/env bash
# agentsdk-unity: Mono's C# compiler and runtime. The tests compile the bridge core, the Unity
# handlers (against stub assemblies) and a console host with `mcs` (C# 7.2) and run them with
# `mono`; check_csharp() uses `mcs` too. No Unity editor or dotnet is needed (or available).
# Also fetches real third-party Unity packages from npm (pinned, integrity-checked) into the user
# cache: the C# corpus the check_csharp tests run on. Idempotent; runs as root after `uv sync`.
set -euo pipefail

# apt_need comes from scripts/setup: installs what is missing, once.
apt_need mono-mcs mono-runtime libmono-system-core4.0-cil libmono-system4.0-cil
# npm may come with a Node.js that is not Debian's (e.g. NodeSource's bundles it): Debian's npm
# package conflicts with that one, so install it only when there is no npm at all.
command -v npm >/dev/null 2>&1 || apt_need npm
command -v mcs >/dev/null && command -v mono >/dev/null

corpus="${XDG_CACHE_HOME:-$HOME/.cache}/agentsdk/unity-corpus"
mkdir -p "$corpus"
# name@version integrity (sha512 as the npm registry publishes it)
while read -r spec integrity; do
  folder="$corpus/${spec/@/-}"
  [ -f "$folder/package/package.json" ] && continue
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent --json "$spec" > pack.json)
  got="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["integrity"])' "$tmp/pack.json")"
  if [ "$got" != "$integrity" ]; then
    echo "unity corpus: $spec has integrity $got, expected $integrity" >&2
    rm -rf "$tmp"
    exit 1
  fi
  mkdir -p "$folder"
  tar -xzf "$tmp"/*.tgz -C "$folder"
  rm -rf "$tmp"
done <<'PACKAGES'
com.cysharp.unitask@2.2.5 sha512-OEJc4HumXjKXXtr2TUjgA7YOcPOaLyV9kuWcp7SylFfe1Rzes0UPCJI1a4LtV3Mhg7oxf8FHoLGWr/cHIKHWsw==
com.neuecc.unirx@7.1.0 sha512-UpgdeFz60ZvD8jR1slG4X+Yuym8gP3FHWXczJbnXYJzSjr57X1Tz6dZee8twU+Qk4ld8QeFjdhj8PlCBsgHx1g==
com.crowdin.unity-plugin@0.12.0 sha512-Vr/9/BN0/K/Y9rGWZfFkuLaq6xxKm/99m3hR+iLFCCsMzlkhe25nE9flEOMaIk+YvrRqXy44pwiFPXBr9E9sXw==
com.github.asus4.onnxruntime.unity@0.4.9 sha512-G9/D0E3w+Yv0120hpBmkPzUU2mTT6xSMXTG3MfX2/LU1ibjiTbZQ05KIrbjhtSGVtfL+Qu5n7ehXEh4RDX5JMA==
PACKAGES
echo "unity: $(mcs --version); C# corpus in $corpus ($(find "$corpus" -name '*.cs' | wc -l) files)"
