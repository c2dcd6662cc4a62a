#!/usr/bin/env bash
# Waymark fault-injection suite: aggregator SIGTERM/SIGKILL ×N, broker kill and restart, PostgreSQL
# immediate stop (test settings and durable settings), and a connection cut after the server
# committed but before the aggregator saw the COMMIT reply. Each run is compared with an
# uninterrupted run of the same simulated input (batches, sighting rows, ingest rollups, and the
# derived rows row for row). See tests/faults/README.md.
#
#   tests/faults/run-faults.sh [--short] [--only NAME,...] [--bin DIR] [--keep] [--report-only] [--known-gap NAMES] [--report FILE]
#
# --short        the CI form (5 simulated minutes, 3 kills, 1 broker kill, 1 PG stop, 1 cut; ≤ 6 min)
# --only         faults to run out of none,sigterm-idle,sigkill-idle,sigterm,sigkill,broker,pgstop,
#                pgstop-durable,cut,sigkill-shards (the uninterrupted baseline always runs; with
#                sigkill-shards also an uninterrupted run of two aggregators on two shards)
# --bin DIR      where the waymark and waymark-aggregator binaries are (default .build/release;
#                scripts/test.sh passes .build/debug, which `swift test` has just built)
# --keep         keep the run directory (databases, logs) and print where it is
# --report-only  print the table and the failed checks but exit 0
# --known-gap    runs (e.g. sigkill) whose derived-row shortfall is a documented known gap: reported,
#                not failing (every other check of those runs still fails)
# Uses the release binaries in .build/release (copied into the run directory first); run
# scripts/setup.sh once on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

keep=0
bin=.build/release
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --keep) keep=1; args+=("$1") ;;
    --short|--report-only) args+=("$1") ;;
    --only|--report|--known-gap) args+=("$1" "$2"); shift ;;
    --bin) bin=$2; shift ;;
    --only=*|--report=*) args+=("$1") ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "run-faults: unknown option $1" >&2; exit 64 ;;
  esac
  shift
done

for b in waymark waymark-aggregator; do
  [[ -x $bin/$b ]] || {
    echo "run-faults: $bin/$b missing; build with: swift build -c release --product waymark && swift build -c release --product waymark-aggregator" >&2
    exit 1
  }
done

# shellcheck source=../../scripts/services.sh
source scripts/services.sh
dir=$(mktemp -d /tmp/waymark-faults.XXXXXX)
chmod 755 "$dir"   # PostgreSQL runs as the postgres user under it
cleanup() {
  local rc=$?
  services_stop
  if [[ $keep -eq 1 ]]; then
    echo "run-faults: kept $dir (aggregator logs in $dir/work/<fault>/aggregator.log)" >&2
  else
    rm -rf "$dir"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

services_start "$dir/services"
mkdir -p "$dir/work"
python3 "$ROOT/tests/faults/faults.py" --workdir "$dir/work" --bin "$bin" "${args[@]}"
