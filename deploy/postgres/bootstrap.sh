#!/usr/bin/env bash
# Creates (or repairs) the Waymark database and its roles by running bootstrap.sql with psql.
#
#   deploy/postgres/bootstrap.sh [options]
#
# Options:
#   --admin-url URL       connect as this superuser (default: as root, the local `postgres` user over
#                         the Unix socket; otherwise the usual PG* environment variables)
#   --database NAME       database to create (default waymark)
#   --role-prefix PREFIX  roles PREFIX_owner, PREFIX_ingest, PREFIX_report (default waymark)
#   --passwords DIR       give each role a random password, kept in DIR/ROLE (mode 0600; existing
#                         files are reused). The server receives only SCRAM-SHA-256 verifiers, so no
#                         password reaches its logs or the process list. Without this option the
#                         roles have no password (use peer or certificate authentication, or set
#                         one later with \password in psql).
#
# Connection strings for the services then look like
#   postgresql://waymark_ingest:PASSWORD@HOST/waymark   (aggregator)
#   postgresql://waymark_report:PASSWORD@HOST/waymark   (waymark report, analysts)
#   postgresql://waymark_owner:PASSWORD@HOST/waymark    (waymark db migrate only)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "bootstrap: $*" >&2; exit 2; }

admin_url=""
database=waymark
prefix=waymark
passwords=""
while (($#)); do
  case $1 in
    --admin-url) admin_url=${2:?--admin-url needs a connection URL}; shift 2 ;;
    --database) database=${2:?--database needs a name}; shift 2 ;;
    --role-prefix) prefix=${2:?--role-prefix needs a prefix}; shift 2 ;;
    --passwords) passwords=${2:?--passwords needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done
ident='^[a-z_][a-z0-9_]{0,40}$'
[[ $database =~ $ident ]] || die "--database '$database' must be lower-case letters, digits and '_', starting with a letter"
[[ $prefix =~ $ident ]] || die "--role-prefix '$prefix' must be lower-case letters, digits and '_', starting with a letter"
command -v psql >/dev/null || die "psql not found; install the Debian package 'postgresql-client'"

psql_admin() { # ARGS... -> psql as the administrator, connected to the maintenance database
  if [[ -n $admin_url ]]; then
    psql "$admin_url" "$@"
  elif [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- psql -d postgres "$@"
  else
    psql -d "${PGDATABASE:-postgres}" "$@"
  fi
}

owner=${prefix}_owner ingest=${prefix}_ingest report=${prefix}_report
psql_admin -X -q -At -v ON_ERROR_STOP=1 -v dbname="$database" -v owner="$owner" -v ingest="$ingest" \
  -v report="$report" < "$here/bootstrap.sql"

if [[ -n $passwords ]]; then
  command -v python3 >/dev/null || die "python3 is needed to compute SCRAM verifiers"
  umask 077
  mkdir -p "$passwords"
  sql=""
  for role in "$owner" "$ingest" "$report"; do
    f=$passwords/$role
    [[ -s $f ]] || python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > "$f"
    verifier=$(python3 "$here/scram_verifier.py" < "$f")
    sql+="ALTER ROLE \"$role\" PASSWORD '$verifier';"$'\n'
  done
  printf '%s' "$sql" | psql_admin -X -q -v ON_ERROR_STOP=1
  echo "bootstrap: passwords for $owner, $ingest, $report are in $passwords/"
fi
echo "bootstrap: database $database with roles $owner (owner), $ingest (ingest), $report (read-only report)"
