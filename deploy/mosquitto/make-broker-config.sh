#!/usr/bin/env bash
# Generates Mosquitto credentials, the ACL and the listener settings for one or more Waymark sites.
#
#   deploy/mosquitto/make-broker-config.sh [options] SITE.yaml [SITE2.yaml ...] OUTDIR
#
# Writes into OUTDIR:
#   passwd         hashed passwords (mosquitto_passwd format) for every account below
#   acl            the topic ACL
#   waymark.conf   listeners and security settings, from waymark.conf.template
#   secrets/USER   each account's password in plain text (mode 0600), to hand to the gateway or
#                  service that uses it; existing files are kept, so re-running the script after
#                  adding a gateway changes no other password
#
# Accounts, per site S with topic prefix P (default waymark/v1/S):
#   gw.G@S         one per gateway G: write P/gateways/G/sightings/# and P/gateways/G/status (also
#                  its last will), read P/gateways/G/ack/#; nothing else ("…/#" is the topic itself
#                  and, with shards (publish.shards, docs/scaling.md), each …/<shard> below it)
#   aggregator@S   read P/gateways/+/sightings/# and P/gateways/+/status, write P/gateways/+/ack/#,
#                  read and write P/devices/# (state, monitored sets, per-device notifications),
#                  write P/events and P/notifications
#                  and its own retained status P/aggregator/status (also its last will; with shards
#                  P/aggregator/status/<shards> for an aggregator without shard 0)
#   reader@S       read-only consumer for apps and dashboards: read P/devices/#, P/events,
#                  P/notifications, P/bridge/state and P/aggregator/status/#
#   homeassistant@S  `waymark homeassistant` (docs/home-assistant.md): read P/devices/+/state, the
#                  aggregators' statuses P/aggregator/status/# and homeassistant/status, read and
#                  write this site's discovery configurations homeassistant/+/waymark_<site>/+/config,
#                  write P/homeassistant/# (its states, availabilities and its status with the last
#                  will); discovery prefix `homeassistant` assumed
#   bridge@S       `waymark bridge` (docs/foreign-gateways.md), only for a site file with
#                  `foreign_gateways:`: write P/gateways/G/sightings/# and P/gateways/G/status for
#                  each bridged gateway G; read espresense/# (ESPresense's default prefix), each
#                  Theengs/OpenMQTTGateway topic's children and each receiver's status topic
#   sitebroker@S   only with --site-broker: a site broker's Mosquitto bridge (make-bridge-config.sh)
#                  on this central broker: write P/gateways/+/sightings/# and P/gateways/+/status
#                  (on behalf of the site's gateways), read P/gateways/+/ack/#, read P/devices/#,
#                  P/events and P/notifications (for its --outputs), write P/bridge/state
#
# Options:
#   --config-dir DIR    where Mosquitto will find passwd and acl (default /etc/mosquitto/waymark;
#                       use OUTDIR itself when generating in place)
#   --tls-port PORT     TLS listener port (default 8883)
#   --tls-bind ADDR     address the TLS listener binds to (default: all addresses)
#   --cafile FILE       CA certificate (default /etc/mosquitto/certs/ca.crt)
#   --certfile FILE     server certificate (default /etc/mosquitto/certs/server.crt)
#   --keyfile FILE      server private key (default /etc/mosquitto/certs/server.key)
#   --local-port PORT   plain MQTT listener on 127.0.0.1 only, for services on the broker host
#                       (default 1883); `none` leaves it out
#   --max-queued N      messages queued per offline persistent session (default 10000)
#   --prefix PREFIX     topic prefix instead of waymark/v1/<site> (only with a single site file)
#   --site-broker       also an account per site for a site broker's bridge (a central broker
#                       that sites' own brokers bridge into; see make-bridge-config.sh)
#
# Needs python3 with PyYAML (Debian: python3-yaml) and mosquitto_passwd (Debian: mosquitto).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "make-broker-config: $*" >&2; exit 2; }

config_dir=/etc/mosquitto/waymark
tls_port=8883
tls_bind=""
cafile=/etc/mosquitto/certs/ca.crt
certfile=/etc/mosquitto/certs/server.crt
keyfile=/etc/mosquitto/certs/server.key
local_port=1883
max_queued=10000
prefix_override=""
site_broker=0
args=()
while (($#)); do
  case $1 in
    --config-dir) config_dir=${2:?--config-dir needs a directory}; shift 2 ;;
    --tls-port) tls_port=${2:?--tls-port needs a port}; shift 2 ;;
    --tls-bind) tls_bind=${2:?--tls-bind needs an address}; shift 2 ;;
    --cafile) cafile=${2:?--cafile needs a file}; shift 2 ;;
    --certfile) certfile=${2:?--certfile needs a file}; shift 2 ;;
    --keyfile) keyfile=${2:?--keyfile needs a file}; shift 2 ;;
    --local-port) local_port=${2:?--local-port needs a port or none}; shift 2 ;;
    --max-queued) max_queued=${2:?--max-queued needs a number}; shift 2 ;;
    --prefix) prefix_override=${2:?--prefix needs a topic prefix}; shift 2 ;;
    --site-broker) site_broker=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; args+=("$@"); break ;;
    -*) die "unknown option '$1'; see --help" ;;
    *) args+=("$1"); shift ;;
  esac
done
((${#args[@]} >= 2)) || die "usage: make-broker-config.sh [options] SITE.yaml [SITE2.yaml ...] OUTDIR (see --help)"
outdir=${args[-1]}
sites=("${args[@]:0:${#args[@]}-1}")
[[ -z $prefix_override || ${#sites[@]} -eq 1 ]] || die "--prefix works with one site file only; each site gets waymark/v1/<site> otherwise"
for p in "$tls_port" "$max_queued"; do [[ $p =~ ^[0-9]+$ ]] || die "'$p' is not a number"; done
[[ $local_port == none || $local_port =~ ^[0-9]+$ ]] || die "--local-port takes a port number or 'none', not '$local_port'"
[[ -z $prefix_override || ! $prefix_override =~ [+#[:space:]] ]] || die "--prefix '$prefix_override' must not contain '+', '#' or spaces"
command -v mosquitto_passwd >/dev/null || die "mosquitto_passwd not found; install the Debian package 'mosquitto'"
python3 -c 'import yaml' 2>/dev/null || die "python3 with PyYAML is needed to read site files; install the Debian package 'python3-yaml'"

# Site id and gateway ids of each site file, as a "SITE GATEWAY..." line, then one line per
# foreign_gateways entry, "GATEWAY<TAB>READ TOPIC<TAB>STATUS TOPIC" (the status topic may be empty),
# and last "slug<TAB>SLUG": the site id as Home Assistant's node id writes it. Ids must be what the
# site validator accepts (letters, digits, '-', '_', '.'), which also keeps them safe in the ACL.
read_site() {
  python3 - "$1" <<'PY'
import re, sys, yaml
path = sys.argv[1]
def fail(msg):
    sys.stderr.write(f"make-broker-config: {path}: {msg}\n"); sys.exit(2)
try:
    with open(path, encoding="utf-8") as f: doc = yaml.safe_load(f)
except OSError as e: fail(f"cannot read the site file ({e.strerror})")
except yaml.YAMLError as e: fail(f"not valid YAML: {e}")
ok = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
if not isinstance(doc, dict): fail("not a site file; it should be a mapping with `site:` and `gateways:`")
site = doc.get("site")
if not isinstance(site, str) or not ok.match(site):
    fail(f"site: {site!r} is not a valid site id; use 1-64 letters, digits, '-', '_' or '.'")
gws = doc.get("gateways")
if not isinstance(gws, list) or not gws: fail("gateways: no gateways listed; add them with `- id: <gateway id>`")
ids = []
for i, g in enumerate(gws):
    gid = g.get("id") if isinstance(g, dict) else None
    if not isinstance(gid, str) or not ok.match(gid):
        fail(f"gateways[{i}].id: {gid!r} is not a valid gateway id; use 1-64 letters, digits, '-', '_' or '.'")
    if gid in ids: fail(f"gateways[{i}].id: duplicate gateway id '{gid}'")
    ids.append(gid)
print(site, *ids)
topic_ok = re.compile(r"^[^+#\s/][^+#\s]{0,255}$")
for i, e in enumerate(doc.get("foreign_gateways") or []):
    if not isinstance(e, dict) or e.get("gateway") not in ids:
        fail(f"foreign_gateways[{i}].gateway: not one of the gateways listed (check with `waymark site check`)")
    status = e.get("status_topic") or ""
    if isinstance(e.get("espresense"), str):
        read = "espresense/#"
        status = status or f"espresense/rooms/{e['espresense']}/status"
    elif isinstance(e.get("theengs"), str):
        read = e["theengs"] + "/+"
        if not status and e["theengs"].endswith("/BTtoMQTT"): status = e["theengs"][:-len("/BTtoMQTT")] + "/LWT"
    else:
        fail(f"foreign_gateways[{i}]: give `espresense: <room>` or `theengs: <topic>` (check with `waymark site check`)")
    for t in [read.removesuffix("/#").removesuffix("/+")] + ([status] if status else []):
        if not topic_ok.match(t) or t.endswith("/") or "//" in t:
            fail(f"foreign_gateways[{i}]: '{t}' is not a topic without wildcards or white space")
    print("\t".join([e["gateway"], read, status]))
slug = "".join(c if c.isalnum() or c == "-" else ("__" if c == "_" else "_%02x" % ord(c)) for c in site)
print("slug\t" + slug)
PY
}

umask 077
mkdir -p "$outdir/secrets"
chmod 755 "$outdir"          # the broker (user mosquitto) must reach passwd and acl
chmod 700 "$outdir/secrets"

secret_for() { # USER -> prints the password, creating secrets/USER when missing
  local f=$outdir/secrets/$1
  if [[ ! -s $f ]]; then
    python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > "$f.tmp"
    mv "$f.tmp" "$f"
  fi
  head -n1 "$f"
}

plain=$(mktemp "$outdir/.passwd.XXXXXX")
acl=$(mktemp "$outdir/.acl.XXXXXX")
trap 'rm -f "$plain" "$acl"' EXIT
{
  echo "# Waymark topic ACL, generated by deploy/mosquitto/make-broker-config.sh; re-run it instead of"
  echo "# editing. No topic lines precede the first user line, so anonymous clients get nothing (and"
  echo "# allow_anonymous is false anyway). Every account may use only the topics listed under it."
} > "$acl"

declare -A seen_site=()
accounts=0
for file in "${sites[@]}"; do
  info=$(read_site "$file")
  read -r site gateways <<<"$(head -n1 <<<"$info")"
  slug=$(sed -n 's/^slug\t//p' <<<"$info")
  foreign=$(sed '1d; /^slug\t/d' <<<"$info")
  [[ -z ${seen_site[$site]:-} ]] || die "$file: site '$site' is also in ${seen_site[$site]}; give each site file its own site id"
  seen_site[$site]=$file
  prefix=${prefix_override:-waymark/v1/$site}
  {
    printf '\n# ---- site %s (%s), topic prefix %s\n' "$site" "$file" "$prefix"
    for gw in $gateways; do
      user="gw.$gw@$site"
      printf '\n# gateway %s: its own batches and status (with its last will), its own acks\n' "$gw"
      printf 'user %s\n' "$user"
      printf 'topic write %s/gateways/%s/sightings/#\n' "$prefix" "$gw"
      printf 'topic write %s/gateways/%s/status\n' "$prefix" "$gw"
      printf 'topic read %s/gateways/%s/ack/#\n' "$prefix" "$gw"
      printf '%s:%s\n' "$user" "$(secret_for "$user")" >> "$plain"
      accounts=$((accounts + 1))
    done
    user="aggregator@$site"
    printf '\n# aggregator: every gateway'"'"'s batches and status in, acks, device state, events and notifications out\n'
    printf 'user %s\n' "$user"
    printf 'topic read %s/gateways/+/sightings/#\n' "$prefix"
    printf 'topic read %s/gateways/+/status\n' "$prefix"
    printf 'topic write %s/gateways/+/ack/#\n' "$prefix"
    printf 'topic readwrite %s/devices/#\n' "$prefix"
    printf 'topic write %s/events\n' "$prefix"
    printf 'topic write %s/notifications\n' "$prefix"
    printf 'topic write %s/aggregator/status/#\n' "$prefix"
    printf '%s:%s\n' "$user" "$(secret_for "$user")" >> "$plain"
    user="reader@$site"
    printf '\n# reader: read-only consumer for phone apps and dashboards\n'
    printf 'user %s\n' "$user"
    printf 'topic read %s/devices/#\n' "$prefix"
    printf 'topic read %s/events\n' "$prefix"
    printf 'topic read %s/notifications\n' "$prefix"
    printf 'topic read %s/bridge/state\n' "$prefix"
    printf 'topic read %s/aggregator/status/#\n' "$prefix"
    printf '%s:%s\n' "$user" "$(secret_for "$user")" >> "$plain"
    user="homeassistant@$site"
    printf '\n# waymark homeassistant: device states in, Home Assistant discovery and states out\n'
    printf 'user %s\n' "$user"
    printf 'topic read %s/devices/+/state\n' "$prefix"
    printf 'topic read %s/aggregator/status/#\n' "$prefix"
    printf 'topic read homeassistant/status\n'
    printf 'topic readwrite homeassistant/+/waymark_%s/+/config\n' "$slug"
    printf 'topic write %s/homeassistant/#\n' "$prefix"
    printf '%s:%s\n' "$user" "$(secret_for "$user")" >> "$plain"
    accounts=$((accounts + 3))
    if [[ -n $foreign ]]; then
      user="bridge@$site"
      printf '\n# waymark bridge: the foreign receivers'"'"' topics in, their gateways'"'"' batches and status out\n'
      printf 'user %s\n' "$user"
      declare -A read_once=()
      while IFS=$'\t' read -r gw read status; do
        printf 'topic write %s/gateways/%s/sightings/#\n' "$prefix" "$gw"
        printf 'topic write %s/gateways/%s/status\n' "$prefix" "$gw"
        for t in "$read" "$status"; do
          [[ -n $t && -z ${read_once[$t]:-} ]] || continue
          read_once[$t]=1
          printf 'topic read %s\n' "$t"
        done
      done <<<"$foreign"
      unset read_once
      printf '%s:%s\n' "$user" "$(secret_for "$user")" >> "$plain"
      accounts=$((accounts + 1))
    fi
    if ((site_broker)); then
      user="sitebroker@$site"
      printf '\n# sitebroker: the site broker'"'"'s Mosquitto bridge carries the gateways'"'"' batches and status in and\n'
      printf '# the acks (and, with its --outputs, the aggregator'"'"'s outputs) back; it reports its link state\n'
      printf 'user %s\n' "$user"
      printf 'topic write %s/gateways/+/sightings/#\n' "$prefix"
      printf 'topic write %s/gateways/+/status\n' "$prefix"
      printf 'topic read %s/gateways/+/ack/#\n' "$prefix"
      printf 'topic read %s/devices/#\n' "$prefix"
      printf 'topic read %s/events\n' "$prefix"
      printf 'topic read %s/notifications\n' "$prefix"
      printf 'topic readwrite %s/bridge/state\n' "$prefix"
      printf '%s:%s\n' "$user" "$(secret_for "$user")" >> "$plain"
      accounts=$((accounts + 1))
    fi
  } >> "$acl"
done

# Hash in place (no password ever appears on a command line), then move into place atomically.
mosquitto_passwd -U "$plain" >/dev/null
mv "$plain" "$outdir/passwd"
mv "$acl" "$outdir/acl"
chmod 600 "$outdir/passwd"
chmod 644 "$outdir/acl"
# The Debian broker drops privileges to the `mosquitto` user; let that group read the password file.
if [[ $(id -u) -eq 0 ]] && getent group mosquitto >/dev/null; then
  chgrp mosquitto "$outdir/passwd" && chmod 640 "$outdir/passwd"
fi

if [[ -n $tls_bind ]]; then tls_listener="listener $tls_port $tls_bind"; else tls_listener="listener $tls_port"; fi
if [[ $local_port == none ]]; then
  local_listener="# No plain listener (--local-port none): every client uses TLS."
else
  local_listener=$'\n'"# Plain MQTT for services on this host only (the aggregator). Loopback only, same passwords and ACL."$'\n'"listener $local_port 127.0.0.1"$'\n'"protocol mqtt"
fi
conf=$(<"$here/waymark.conf.template")
conf=${conf//@CONFIG_DIR@/$config_dir}
conf=${conf//@MAX_QUEUED@/$max_queued}
conf=${conf//@TLS_LISTENER@/$tls_listener}
conf=${conf//@CAFILE@/$cafile}
conf=${conf//@CERTFILE@/$certfile}
conf=${conf//@KEYFILE@/$keyfile}
conf=${conf//@LOCAL_LISTENER@/$local_listener}
printf '%s\n' "$conf" > "$outdir/waymark.conf"
chmod 644 "$outdir/waymark.conf"

stale=()
for f in "$outdir"/secrets/*; do
  [[ -e $f ]] || continue
  grep -qxF "user $(basename "$f")" "$outdir/acl" || stale+=("$(basename "$f")")
done
echo "make-broker-config: $accounts accounts for ${#sites[@]} site(s) in $outdir (passwd, acl, waymark.conf, secrets/)"
if ((${#stale[@]})); then
  echo "make-broker-config: no longer in any site file, so without access: ${stale[*]} (delete their secrets/ files when done)"
fi
