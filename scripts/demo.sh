#!/usr/bin/env bash
# The one-command demo (README "Quick start"):
#   scripts/demo.sh [--devices N] [--duration 30m] [--speedup X] [--seed S]
# Installs what is missing (scripts/setup.sh), builds the release programs, starts a private
# Mosquitto and PostgreSQL in a new temporary directory, and runs `waymark demo` against them: the
# example museum's gateways as real waymark-edge processes replaying simulated sightings, the
# waymark-aggregator, then the foot-traffic report, the accuracy against ground truth and the map.
# Ctrl-C (or SIGINT/SIGTERM to this script) or the end of the run stops everything it started;
# the directory is kept (map, logs, database files): scripts/demo-psql.sh DIR opens the data in psql.
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
while (($#)); do
  case $1 in
    --devices|--duration|--speedup|--seed)
      (($# >= 2)) || { echo "demo: $1 needs a value" >&2; exit 64; }
      args+=("$1" "$2"); shift 2 ;;
    -h|--help)
      sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *)
      echo "demo: unknown option '$1'; use --devices N, --duration 30m, --speedup X or --seed S" >&2; exit 64 ;;
  esac
done

scripts/setup.sh
echo "demo: building the release programs (the first build takes several minutes)"
build_log=$(mktemp /tmp/waymark-demo-build.XXXXXX)
for product in waymark waymark-edge waymark-aggregator; do
  if ! swift build -c release --product "$product" >"$build_log" 2>&1; then
    cat "$build_log" >&2; rm -f "$build_log"
    echo "demo: building $product failed (see above)" >&2; exit 1
  fi
  tail -1 "$build_log"
done
rm -f "$build_log"
bin=$(swift build -c release --show-bin-path)

work=$(mktemp -d /tmp/waymark-demo.XXXXXX)
chmod 755 "$work"
source scripts/services.sh
demo_pid=""
cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  if [[ -n $demo_pid ]] && kill -0 "$demo_pid" 2>/dev/null; then
    kill -TERM "$demo_pid" 2>/dev/null || true
    wait "$demo_pid" 2>/dev/null || true
  fi
  # Whatever the demo started, should it have been killed before stopping its children itself.
  if [[ -f $work/children.pgid ]]; then
    kill -TERM -- "-$(cat "$work/children.pgid")" 2>/dev/null || true
    rm -f "$work/children.pgid"
  fi
  services_stop
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

services_start "$work/services"
echo "demo: private Mosquitto at $WAYMARK_MQTT_URL, PostgreSQL at $WAYMARK_DATABASE_URL (in $work/services)"

# In the background so that a signal to this script is handled at once (the trap stops it).
"$bin/waymark" demo --work "$work" --mqtt "$WAYMARK_MQTT_URL" --database "$WAYMARK_DATABASE_URL" "${args[@]}" &
demo_pid=$!
wait "$demo_pid"
status=$?
demo_pid=""
exit "$status"
