#!/usr/bin/env bash
# A small private certificate authority for the broker's TLS listener, with openssl.
#
#   deploy/mosquitto/make-certs.sh [--days N] OUTDIR HOST [HOST ...]
#
# Creates, in OUTDIR:
#   ca.key, ca.crt         the CA (kept if they already exist). ca.key signs server certificates;
#                          keep it off the broker if you can. ca.crt goes to every gateway.
#   server.key, server.crt the broker's key and certificate, valid for every HOST given (DNS names
#                          or IP addresses: each must be a name the gateways use to connect)
#
# Re-running renews server.crt (and server.key) with the same CA, so gateways need no change.
# Use a certificate from your organisation's CA instead when you have one: Mosquitto only needs
# cafile, certfile and keyfile (see deploy/README.md, "TLS certificates").
set -euo pipefail
die() { echo "make-certs: $*" >&2; exit 2; }

days=825
if [[ ${1:-} == --days ]]; then days=${2:?--days needs a number}; shift 2; fi
[[ $days =~ ^[0-9]+$ ]] || die "--days takes a number of days, not '$days'"
(($# >= 2)) || die "usage: make-certs.sh [--days N] OUTDIR HOST [HOST ...]"
command -v openssl >/dev/null || die "openssl not found; install the Debian package 'openssl'"
out=$1; shift

san=()
for h in "$@"; do
  if [[ $h =~ ^[0-9.]+$ || $h == *:* ]]; then san+=("IP:$h")
  elif [[ $h =~ ^[A-Za-z0-9.-]+$ ]]; then san+=("DNS:$h")
  else die "'$h' is neither a host name nor an IP address"; fi
done

umask 077
mkdir -p "$out"
chmod 755 "$out"    # the broker reads ca.crt, server.crt and server.key after dropping privileges
if [[ ! -s $out/ca.key || ! -s $out/ca.crt ]]; then
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$out/ca.key" -out "$out/ca.crt" -days $((days * 2)) -subj "/CN=Waymark MQTT CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  echo "make-certs: new CA in $out/ca.crt"
fi

ext=$(mktemp); csr=$(mktemp)
trap 'rm -f "$ext" "$csr"' EXIT
{
  echo "basicConstraints=critical,CA:FALSE"
  echo "keyUsage=critical,digitalSignature,keyEncipherment"
  echo "extendedKeyUsage=serverAuth"
  echo "subjectAltName=$(IFS=,; echo "${san[*]}")"
} > "$ext"
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
  -keyout "$out/server.key" -out "$csr" -subj "/CN=$1" 2>/dev/null
openssl x509 -req -in "$csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
  -CAserial "$out/ca.srl" -out "$out/server.crt" -days "$days" -extfile "$ext" 2>/dev/null
chmod 644 "$out/ca.crt" "$out/server.crt"
chmod 600 "$out/ca.key" "$out/server.key"
# The Debian broker runs as user `mosquitto`; let that group read the server key (never the CA key).
if [[ $(id -u) -eq 0 ]] && getent group mosquitto >/dev/null; then
  chgrp mosquitto "$out/server.key" && chmod 640 "$out/server.key"
fi
echo "make-certs: server certificate for ${san[*]} in $out/server.crt (valid $days days)"
