#!/usr/bin/env bash
# Runs one benchmark of waymark-bench in release, with a private Mosquitto and PostgreSQL for the
# ones that need them (aggregator, reports). PostgreSQL runs with its durable defaults (fsync,
# full-page writes and synchronous commit on), as an operator runs it; --fast-postgres switches
# them off (the test suite's settings), a labelled variant that is not how production runs.
#
#   scripts/bench.sh [--fast-postgres] NAME [ARGS...]     e.g. scripts/bench.sh aggregator
#
# On a shared machine: flock /tmp/waymark-heavy.lock scripts/bench.sh NAME
set -euo pipefail
cd "$(dirname "$0")/.."
settings=durable
if [[ ${1:-} == --fast-postgres ]]; then settings=fast; shift; fi
name=${1:?usage: scripts/bench.sh [--fast-postgres] NAME [ARGS...] (NAME: swift run -c release waymark-bench --help)}
shift
# Quietly; on failure again, to show the errors.
swift build -c release --product waymark-bench >/dev/null 2>&1 || swift build -c release --product waymark-bench
# live-latency plays the gateways with `waymark simulate --publish`.
if [[ $name == live-latency ]]; then
  swift build -c release --product waymark >/dev/null 2>&1 || swift build -c release --product waymark
fi
case $name in
  aggregator|reports|live-latency)
    source scripts/services.sh
    dir=$(mktemp -d /tmp/waymark-bench.XXXXXX)
    trap 'services_stop; rm -rf "$dir"' EXIT
    WAYMARK_PG_SETTINGS=$settings services_start "$dir"
    echo "bench: private Mosquitto and PostgreSQL ($settings settings) under $dir"
    ;;
esac
.build/release/waymark-bench "$name" "$@"
