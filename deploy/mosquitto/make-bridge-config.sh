#!/usr/bin/env bash
# Generates the Mosquitto bridge that joins a site's own broker to a central broker, so that the
# site's gateways talk to a broker in the building and one central aggregator serves many sites.
#
#   deploy/mosquitto/make-bridge-config.sh [options] --remote HOST:PORT SITE.yaml OUTDIR
#
# Writes OUTDIR/waymark-bridge-SITE.conf, to copy into the SITE broker's /etc/mosquitto/conf.d/.
# It is Mosquitto's own bridge (no Waymark process in between), with these topics, for the site's
# topic prefix P (default waymark/v1/<site>):
#
#   out (site → central)   P/gateways/+/sightings/#  QoS 1   the gateways' batches (…/sightings, or
#                                                            …/sightings/<shard> with shards)
#                          P/gateways/+/status       QoS 1   their retained status and last will
#   in  (central → site)   P/gateways/+/ack/#        QoS 1   the aggregators' acks, back to the spools
#   in, with --outputs     P/devices/#, P/events, P/notifications  for consumers at the site
#
# The bridge's own connection state is published, retained, to P/bridge/state on both brokers
# ("1" connected, "0" not). The central broker's account for the bridge (sitebroker@SITE) comes from
# `make-broker-config.sh --site-broker` run on the central broker; its password file is what
# --remote-password-file reads.
#
# Delivery: the bridge keeps a persistent session on the central broker (cleansession false, a
# fixed client id), so acks queue there while the link is down, and the site broker queues batches
# for the bridge up to its max_queued_messages. What overflows is not lost: every gateway keeps a
# batch in its spool until the aggregator's ack comes back over the bridge, and re-sends it.
#
# Options:
#   --remote HOST:PORT           the central broker's TLS listener (required)
#   --cafile FILE                CA certificate that signed the central broker's certificate; the
#                                link is TLS unless --plain is given
#   --plain                      no TLS on the link (a private network, or a test); not with --cafile
#   --remote-user USER           account on the central broker (default sitebroker@SITE)
#   --remote-password-file FILE  that account's password (from the central broker's
#                                secrets/sitebroker@SITE); without it the bridge connects anonymously,
#                                which a broker configured by make-broker-config.sh refuses
#   --outputs                    also bring device state, events and notifications back to the site
#   --prefix PREFIX              topic prefix instead of waymark/v1/<site>
#   --name NAME                  bridge connection name (default waymark-SITE); also its client ids
#
# Needs python3 with PyYAML (Debian: python3-yaml).
set -euo pipefail

die() { echo "make-bridge-config: $*" >&2; exit 2; }

remote=""
cafile=""
plain=0
remote_user=""
password_file=""
outputs=0
prefix_override=""
name=""
args=()
while (($#)); do
  case $1 in
    --remote) remote=${2:?--remote needs HOST:PORT}; shift 2 ;;
    --cafile) cafile=${2:?--cafile needs a file}; shift 2 ;;
    --plain) plain=1; shift ;;
    --remote-user) remote_user=${2:?--remote-user needs a user name}; shift 2 ;;
    --remote-password-file) password_file=${2:?--remote-password-file needs a file}; shift 2 ;;
    --outputs) outputs=1; shift ;;
    --prefix) prefix_override=${2:?--prefix needs a topic prefix}; shift 2 ;;
    --name) name=${2:?--name needs a name}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1'; see --help" ;;
    *) args+=("$1"); shift ;;
  esac
done
((${#args[@]} == 2)) || die "usage: make-bridge-config.sh [options] --remote HOST:PORT SITE.yaml OUTDIR (see --help)"
site_file=${args[0]}
outdir=${args[1]}
[[ -n $remote ]] || die "--remote HOST:PORT is required: the central broker the site's broker connects to"
[[ $remote =~ ^[A-Za-z0-9.:_-]+:[0-9]+$ || $remote =~ ^\[[0-9A-Fa-f:]+\]:[0-9]+$ ]] \
  || die "--remote '$remote' is not HOST:PORT (e.g. mqtt.example.org:8883)"
if ((plain)); then
  [[ -z $cafile ]] || die "--plain and --cafile exclude each other: the link is either TLS or not"
else
  [[ -n $cafile ]] || die "the link to the central broker is TLS: give --cafile FILE (its CA certificate), or --plain on a private network"
  [[ -r $cafile ]] || die "--cafile '$cafile' is not a readable file"
fi
if [[ -n $password_file ]]; then
  [[ -r $password_file ]] || die "--remote-password-file '$password_file' is not a readable file"
fi
[[ -z $prefix_override || ! $prefix_override =~ [+#[:space:]] ]] || die "--prefix '$prefix_override' must not contain '+', '#' or spaces"
python3 -c 'import yaml' 2>/dev/null || die "python3 with PyYAML is needed to read the site file; install the Debian package 'python3-yaml'"

site=$(python3 - "$site_file" <<'PY'
import re, sys, yaml
path = sys.argv[1]
def fail(msg):
    sys.stderr.write(f"make-bridge-config: {path}: {msg}\n"); sys.exit(2)
try:
    with open(path, encoding="utf-8") as f: doc = yaml.safe_load(f)
except OSError as e: fail(f"cannot read the site file ({e.strerror})")
except yaml.YAMLError as e: fail(f"not valid YAML: {e}")
if not isinstance(doc, dict): fail("not a site file; it should be a mapping with `site:` and `gateways:`")
site = doc.get("site")
if not isinstance(site, str) or not re.match(r"^[A-Za-z0-9._-]{1,64}$", site):
    fail(f"site: {site!r} is not a valid site id; use 1-64 letters, digits, '-', '_' or '.'")
print(site)
PY
)
prefix=${prefix_override:-waymark/v1/$site}
name=${name:-waymark-$site}
[[ $name =~ ^[A-Za-z0-9._-]{1,64}$ ]] || die "--name '$name' may only hold letters, digits, '-', '_' or '.'"
remote_user=${remote_user:-sitebroker@$site}

umask 077
mkdir -p "$outdir"
out=$outdir/waymark-bridge-$site.conf
tmp=$(mktemp "$outdir/.bridge.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  echo "# Waymark bridge of site $site to the central broker $remote."
  echo "# Generated by deploy/mosquitto/make-bridge-config.sh; re-run it instead of editing."
  echo "# Goes into the site broker's /etc/mosquitto/conf.d/ (bridges are read at start: restart"
  echo "# Mosquitto after changing it)."
  echo
  echo "connection $name"
  echo "address $remote"
  echo "bridge_protocol_version mqttv311"
  echo "# A fixed client id and a persistent session on the central broker: acks queue there while"
  echo "# the link is down."
  echo "remote_clientid $name"
  echo "local_clientid $name.local"
  echo "cleansession false"
  echo "# Tells a Mosquitto on the other end that this is a bridge (no message loops)."
  echo "try_private true"
  echo "keepalive_interval 30"
  echo "# Reconnect after 5 s, backing off to 60 s while the central broker stays away."
  echo "restart_timeout 5 60"
  echo "start_type automatic"
  echo "notifications true"
  echo "notification_topic $prefix/bridge/state"
  if [[ -n $password_file ]]; then
    echo "remote_username $remote_user"
    echo "remote_password $(head -n1 "$password_file" | tr -d '\r\n')"
  else
    echo "# No --remote-password-file: the bridge connects anonymously."
  fi
  if ((plain)); then
    echo "# --plain: no TLS on this link."
  else
    echo "bridge_cafile $cafile"
    echo "bridge_insecure false"
    echo "bridge_tls_version tlsv1.2"
  fi
  echo
  echo "# Site → central: the gateways' batches and status (retained, with their last will)."
  echo "# (\"sightings/#\" is …/sightings itself and, with shards, each …/sightings/<shard>.)"
  echo "topic $prefix/gateways/+/sightings/# out 1"
  echo "topic $prefix/gateways/+/status out 1"
  echo "# Central → site: the aggregators' acks (…/ack, or …/ack/<shard>), back to the gateways' spools."
  echo "topic $prefix/gateways/+/ack/# in 1"
  if ((outputs)); then
    echo "# Central → site (--outputs): device state, events and notifications for consumers at the site."
    echo "topic $prefix/devices/# in 1"
    echo "topic $prefix/events in 1"
    echo "topic $prefix/notifications in 1"
  fi
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
# It holds a password: readable by root and, on a Debian broker, by the mosquitto group.
chmod 600 "$out"
if [[ $(id -u) -eq 0 ]] && getent group mosquitto >/dev/null; then
  chgrp mosquitto "$out" && chmod 640 "$out"
fi
echo "make-bridge-config: wrote $out (site $site, prefix $prefix, to $remote$( ((plain)) && echo ' without TLS' || echo ' over TLS'))"
