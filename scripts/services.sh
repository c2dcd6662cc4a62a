# Private Mosquitto and PostgreSQL servers for tests and the demo. Source this file, then call
#   services_start DIR     start both under DIR (data, sockets, logs); exports the variables below
#   services_stop          stop what services_start started (safe to call twice)
# PostgreSQL's durability: WAYMARK_PG_SETTINGS=fast (the default, for tests and the demo: fsync,
# full-page writes and synchronous commit off — a crash of the machine can lose or corrupt data)
# or durable (PostgreSQL's defaults, as an operator runs it; what scripts/bench.sh uses).
# Exported for the programs and tests:
#   WAYMARK_MQTT_URL      mqtt://127.0.0.1:PORT        (anonymous, private broker)
#   WAYMARK_DATABASE_URL  postgresql://waymark@127.0.0.1:PORT/waymark
#   WAYMARK_PG_BIN        PostgreSQL server binaries (pg_ctl, postgres)
#   WAYMARK_SERVICES_DIR  DIR
# No system service is touched: the servers run as children of this shell's user (PostgreSQL as
# the `postgres` user when this shell is root, since it refuses to run as root).

services_free_port() {
  python3 - <<'PY'
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
}

services_pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [[ -x $d/pg_ctl ]] && { echo "$d"; return; }; done
  echo "services: PostgreSQL server binaries not found; run scripts/setup.sh" >&2
  return 1
}

services_start() {
  local dir=$1
  mkdir -p "$dir"
  export WAYMARK_SERVICES_DIR=$dir

  # Mosquitto on a free loopback port, anonymous access (the deploy/ configuration is not used here).
  local mport; mport=$(services_free_port)
  cat > "$dir/mosquitto.conf" <<CONF
listener $mport 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 100000
message_size_limit 0
log_dest file $dir/mosquitto.log
CONF
  # Run as root, mosquitto drops privileges to `mosquitto` before it opens its log.
  : > "$dir/mosquitto.log"
  if [[ $(id -u) -eq 0 ]] && id mosquitto >/dev/null 2>&1; then chown mosquitto "$dir/mosquitto.log"; fi
  mosquitto -c "$dir/mosquitto.conf" -d 2>/dev/null || mosquitto -c "$dir/mosquitto.conf" &
  # -d daemonises; remember its pid by port.
  local i
  for i in $(seq 50); do
    if python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$mport)))" 2>/dev/null; then break; fi
    sleep 0.1
  done
  export WAYMARK_MQTT_PORT=$mport
  export WAYMARK_MQTT_URL="mqtt://127.0.0.1:$mport"
  pgrep -f "mosquitto -c $dir/mosquitto.conf" | head -1 > "$dir/mosquitto.pid"

  # PostgreSQL: own data directory, free port, socket in DIR.
  WAYMARK_PG_BIN=$(services_pg_bin) || return 1
  export WAYMARK_PG_BIN
  local pport; pport=$(services_free_port)
  local pgdata=$dir/pgdata
  local run=()
  if [[ $(id -u) -eq 0 ]]; then
    chown postgres "$dir" 2>/dev/null || true
    chmod 755 "$dir"
    run=(runuser -u postgres --)
  fi
  if [[ ! -d $pgdata ]]; then
    "${run[@]}" "$WAYMARK_PG_BIN/initdb" -D "$pgdata" -U postgres -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; return 1; }
  fi
  local durability
  case ${WAYMARK_PG_SETTINGS:-fast} in
    fast) durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off" ;;
    durable) durability="-c fsync=on -c synchronous_commit=on -c full_page_writes=on" ;;
    *) echo "services: WAYMARK_PG_SETTINGS must be 'fast' or 'durable', not '$WAYMARK_PG_SETTINGS'" >&2; return 1 ;;
  esac
  "${run[@]}" "$WAYMARK_PG_BIN/pg_ctl" -D "$pgdata" -l "$dir/postgres.log" -w -t 60 \
    -o "-p $pport -k $dir -c listen_addresses=127.0.0.1 $durability -c max_connections=100" \
    start >/dev/null || { cat "$dir/postgres.log" >&2; return 1; }
  export WAYMARK_PG_PORT=$pport
  export WAYMARK_PG_HOST=127.0.0.1
  psql -h 127.0.0.1 -p "$pport" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 \
    -c "DO \$\$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname='waymark') THEN CREATE ROLE waymark LOGIN SUPERUSER; END IF; END\$\$;" \
    -c "SELECT 1 FROM pg_database WHERE datname='waymark'" | grep -q 1 \
    || psql -h 127.0.0.1 -p "$pport" -U postgres -d postgres -qAt -c "CREATE DATABASE waymark OWNER waymark" >/dev/null
  export WAYMARK_DATABASE_URL="postgresql://waymark@127.0.0.1:$pport/waymark"
}

services_stop() {
  local dir=${WAYMARK_SERVICES_DIR:-}
  [[ -n $dir ]] || return 0
  if [[ -f $dir/mosquitto.pid ]]; then
    local pid; pid=$(cat "$dir/mosquitto.pid")
    [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
    rm -f "$dir/mosquitto.pid"
  fi
  if [[ -d $dir/pgdata && -n ${WAYMARK_PG_BIN:-} ]]; then
    local run=()
    [[ $(id -u) -eq 0 ]] && run=(runuser -u postgres --)
    "${run[@]}" "$WAYMARK_PG_BIN/pg_ctl" -D "$dir/pgdata" -m fast -w stop >/dev/null 2>&1 || true
  fi
}
