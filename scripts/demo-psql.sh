#!/usr/bin/env bash
# Opens psql on the database a finished demo kept:  scripts/demo-psql.sh DIR [psql arguments…]
# DIR is the directory scripts/demo.sh --keep printed. Restarts that private PostgreSQL on its data
# directory (DIR/services/pgdata, on a free loopback port), runs psql as the `waymark` user on the
# `waymark` database, and stops the server again when psql exits (or on Ctrl-C).
# Example: scripts/demo-psql.sh /tmp/waymark-demo.AbC123 -c 'SELECT count(*) FROM visits'
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/demo-psql.sh DIR [psql arguments…] (DIR as printed by scripts/demo.sh --keep)}
shift
pgdata=$dir/services/pgdata
[[ -d $pgdata ]] || { echo "demo-psql: $pgdata not found; pass the directory scripts/demo.sh --keep printed" >&2; exit 1; }
source scripts/services.sh
pgbin=$(services_pg_bin)
port=$(services_free_port)
run=()
[[ $(id -u) -eq 0 ]] && run=(runuser -u postgres --)
stop() { "${run[@]}" "$pgbin/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null 2>&1 || true; }
trap stop EXIT
trap 'exit 130' INT TERM
"${run[@]}" "$pgbin/pg_ctl" -D "$pgdata" -l "$dir/services/postgres.log" -w -t 60 \
  -o "-p $port -k $dir/services -c listen_addresses=127.0.0.1" start >/dev/null \
  || { tail -5 "$dir/services/postgres.log" >&2; exit 1; }
echo "demo-psql: PostgreSQL on 127.0.0.1:$port (stopped again when psql exits); tables: \\dt, reports: \\df waymark_report_*" >&2
psql "postgresql://waymark@127.0.0.1:$port/waymark" "$@"
