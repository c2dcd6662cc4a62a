#!/usr/bin/env bash
# Installs the Debian packages Waymark needs to build, test and run the demo.
# Idempotent: installs only what is missing, and touches no running service.
#   scripts/setup.sh            build + test dependencies
#   scripts/setup.sh --vm       also what the HCI VM test needs (qemu, busybox, cpio, gcc;
#                               bluez for the hciconfig run.sh copies into the VM; mosquitto-clients
#                               for mosquitto_sub in the VM; jq to check what the agent published)
set -euo pipefail

packages=(
  libmosquitto-dev   # MQTT client library (edge, aggregator)
  mosquitto          # broker for tests and the demo
  libbluetooth-dev   # BlueZ libbluetooth (edge HCI scanning)
  libpq-dev          # PostgreSQL client library (aggregator, reports)
  postgresql         # server for tests and the demo
  pkg-config
  librsvg2-bin       # rsvg-convert: renders the SVG map in tests
  mosquitto-clients  # mosquitto_pub/mosquitto_sub: deploy/ ACL tests
  python3-yaml       # deploy/mosquitto/make-broker-config.sh reads site files
  openssl            # deploy/mosquitto/make-certs.sh (TLS listener test)
  chromium           # headless browser for the web console's test (Tests/…/ConsoleBrowserTests.swift)
)
if [[ "${1:-}" == "--vm" ]]; then
  packages+=(qemu-system-x86 busybox-static cpio gcc bluez mosquitto-clients jq)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Debian's postinst would start system services; we run private servers instead.
policy_rc=/usr/sbin/policy-rc.d
created_policy=0
if [[ ! -e $policy_rc ]]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee $policy_rc >/dev/null
  $SUDO chmod +x $policy_rc
  created_policy=1
fi
trap '[[ $created_policy == 1 ]] && $SUDO rm -f $policy_rc' EXIT
$SUDO apt-get update -qq
# chromium is large and only the console's browser test needs it: when it cannot be installed
# (no such package on this distribution or architecture), say so and install the rest; that test
# then reports itself skipped with the reason.
required=()
for p in "${missing[@]}"; do [[ $p == chromium ]] || required+=("$p"); done
if ((${#required[@]} > 0)); then
  $SUDO apt-get install -y -qq --no-install-recommends "${required[@]}"
fi
if [[ " ${missing[*]} " == *" chromium "* ]]; then
  if ! $SUDO apt-get install -y -qq --no-install-recommends chromium; then
    echo "setup: WARNING: Debian's chromium could not be installed; the console's browser test will be skipped" >&2
  fi
fi
echo "setup: done"
