#!/usr/bin/env bash
# The one-command demo (README "Quick start"):
#   scripts/demo.sh [--devices N] [--duration 30m] [--speedup X] [--seed S] [--live-seconds 30] [--keep] [--serve [--port P]]
# Installs what is missing (scripts/setup.sh), builds the release programs, starts a private
# Mosquitto and PostgreSQL in a new temporary directory, and runs `waymark demo` against them: the
# example museum's gateways as real waymark-edge processes replaying simulated sightings, the
# waymark-aggregator, then the foot-traffic report, the accuracy against ground truth, how soon a
# live region reaches the broker at real time (--live-seconds, 0 skips it) and the map.
# Ctrl-C (or SIGINT/SIGTERM to this script) or the end of the run stops everything it started and
# removes the directory; --keep keeps it (map, logs, database files: scripts/demo-psql.sh DIR opens
# the data in psql), and so does a failed run, for its logs. Either way the last line says which.
# At the end it starts the web console (`waymark serve`) on the demo's data and prints its address
# with a sign-in link; --serve leaves it running until Ctrl-C (--port P, default 8080), otherwise
# it is stopped again at once.
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
keep=0
serve=0
port=8080
while (($#)); do
  case $1 in
    --devices|--duration|--speedup|--seed|--live-seconds)
      (($# >= 2)) || { echo "demo: $1 needs a value" >&2; exit 64; }
      args+=("$1" "$2"); shift 2 ;;
    --keep)
      keep=1; shift ;;
    --serve)
      serve=1; shift ;;
    --port)
      (($# >= 2)) || { echo "demo: $1 needs a value" >&2; exit 64; }
      port=$2; shift 2 ;;
    -h|--help)
      sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *)
      echo "demo: unknown option '$1'; use --devices N, --duration 30m, --speedup X, --seed S, --live-seconds N, --keep, --serve or --port P" >&2; exit 64 ;;
  esac
done
((keep)) || args+=(--temporary-work)

scripts/setup.sh
echo "demo: building the release programs (the first build takes several minutes)"
# One build for all of the package's programs (waymark, waymark-edge, waymark-aggregator, and
# waymark-bench with them), so that they compile in parallel: `--product` names only one.
build_log=$(mktemp /tmp/waymark-demo-build.XXXXXX)
if ! swift build -c release >"$build_log" 2>&1; then
  cat "$build_log" >&2; rm -f "$build_log"
  echo "demo: the release build failed (see above)" >&2; exit 1
fi
tail -1 "$build_log"
rm -f "$build_log"
bin=$(swift build -c release --show-bin-path)

work=$(mktemp -d /tmp/waymark-demo.XXXXXX)
chmod 755 "$work"
source scripts/services.sh
demo_pid=""
console_pid=""
cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  if [[ -n $demo_pid ]] && kill -0 "$demo_pid" 2>/dev/null; then
    kill -TERM "$demo_pid" 2>/dev/null || true
    wait "$demo_pid" 2>/dev/null || true
  fi
  if [[ -n $console_pid ]] && kill -0 "$console_pid" 2>/dev/null; then
    kill -TERM "$console_pid" 2>/dev/null || true
    wait "$console_pid" 2>/dev/null || true
  fi
  # Whatever the demo started, should it have been killed before stopping its children itself.
  if [[ -f $work/children.pgid ]]; then
    kill -TERM -- "-$(cat "$work/children.pgid")" 2>/dev/null || true
    rm -f "$work/children.pgid"
  fi
  services_stop
  # The directory holds the map, the logs and the database files (tens of MB): kept only with
  # --keep, or after a failure for its logs (not after an interrupt or a usage error, status 64).
  if ((keep)); then
    echo "demo: kept $work (map.svg, logs/, services/pgdata: scripts/demo-psql.sh $work; rm -rf $work when done)"
  elif ((status != 0 && status != 64 && status != 129 && status != 130 && status != 143)); then
    echo "demo: the run failed; kept $work for its logs (logs/, services/*.log; rm -rf $work when done)" >&2
  else
    rm -rf -- "$work"
    echo "demo: removed $work (scripts/demo.sh --keep keeps it)"
  fi
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
((status == 0)) || exit "$status"

# The web console on the demo's data: a read-only login (the waymark_report role), a one-off
# token (only its SHA-256 goes to the console), the retained device states still on the broker.
"$WAYMARK_PG_BIN/psql" -q "$WAYMARK_DATABASE_URL" -c "DO \$\$ BEGIN CREATE ROLE waymark_console LOGIN IN ROLE waymark_report; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$" >/dev/null
token=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
digest=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
console_log="$work/logs/console.log"
mkdir -p "$work/logs"
"$bin/waymark" serve --site deploy/examples/museum.yaml --broker "$WAYMARK_MQTT_URL" \
  --database "${WAYMARK_DATABASE_URL/waymark@/waymark_console@}" --port "$port" \
  --set "auth.tokens=sha256:$digest" >"$console_log" 2>&1 &
console_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^waymark serve: console at \(http:[^ ]*\)$/\1/p' "$console_log" | head -1)
  [[ -n $url ]] && break
  kill -0 "$console_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $url ]]; then
  cat "$console_log" >&2
  echo "demo: the web console did not start (port $port taken? use --port P)" >&2
  exit 1
fi
if ((serve)); then
  echo "demo: web console at $url — sign in with ${url}?token=$token (Ctrl-C stops it and the demo's servers)"
  wait "$console_pid"
else
  kill -TERM "$console_pid"; wait "$console_pid" 2>/dev/null || true
  console_pid=""
  echo "demo: web console was at $url (stopped; scripts/demo.sh --serve keeps it running, docs/console.md)"
fi
exit 0
