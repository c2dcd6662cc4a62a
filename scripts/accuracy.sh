#!/usr/bin/env bash
# The accuracy suite (docs/accuracy.md): builds `waymark` and `waymark-bench` in release and runs
#   waymark-bench accuracy [--short] [--json] [--work DIR]
# from the repository root. The Kolakowski dataset is read from ../shared/data (or
# $WAYMARK_KOLAKOWSKI) and converted with python3 tools/kolakowski/convert.py when needed.
# `scripts/accuracy.sh validate [--seeds N]` runs the same-geometry radio validation instead.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product waymark
swift build -c release --product waymark-bench
bin=$(swift build -c release --show-bin-path)
if [ "${1:-}" = "validate" ]; then
    shift
    exec "$bin/waymark-bench" radio-validate "$@"
fi
WAYMARK_BIN="$bin/waymark" exec "$bin/waymark-bench" accuracy "$@"
