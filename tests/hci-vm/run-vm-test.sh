#!/usr/bin/env bash
# Issue 9: proves the libbluetooth HCI scan path (WaymarkBluetooth.HCIScanner) against a real Linux
# kernel. Boots Debian's kernel under QEMU with a virtual LE controller (../shared/hci-vm/run.sh),
# runs tests/hci-vm/scenario.sh inside it with a release `waymark-edge` (Swift runtime
# linked statically), a Mosquitto broker and the project's vctl (tests/hci-vm/vctl.c), then checks
# what came out (checks.sh, checks-edge.sh):
#   - edge: waymark-edge scanning hci0 publishes batches (v1, one boot, consecutive seq) with exactly
#     the tracked iBeacon, Eddystone-UID and AltBeacon of tests/hci-vm/site.yaml, their exact counts
#     and RSSI mean/max for what the controller sent, never the untracked ones; status scan on, then
#     offline; across an HCI reset its status goes on → off → on and no advert is lost or counted
#     twice; it counts and decodes all 814 adverts of the shared capture; it refuses hci0 down /
#     missing with the scanner's messages;
# and with `waymark-edge scan` (the scanner alone, JSON lines):
#   - beacons: the iBeacon, Eddystone-UID and AltBeacon reports arrive with the right identities
#     and every RSSI the controller sent; the scan parameters reach the controller; every report
#     the controller sent is printed;
#   - extended: on a controller that supports extended scanning the scanner uses the extended
#     commands and the same identities and RSSI arrive as extended reports; --legacy forces legacy;
#   - capture: the events of the shared hcidump captures (`once` + `hci` lines) are all received,
#     and each report's address, RSSI and data equal the reference decoding;
#   - the controller is left not scanning after a normal stop, after SIGTERM, and at the end of
#     every phase; a scanner that loses its adapter (down/up, HCI reset, unplug) or whose scan
#     another program switches off (hcitool) recovers;
#   - clear errors for a second scanner (Command Disallowed), missing capabilities, hci0 down,
#     and no hci0.
# Run by scripts/test.sh after `swift test`; alone: tests/hci-vm/run-vm-test.sh
# Needs root the first time (apt-get) and network for Debian's kernel package (cached in
# ~/.cache/hci-vm). HCI_VM_DIR overrides where run.sh lives; HCI_VM_KEEP=1 keeps the work folder;
# HCI_VM_SCRATCH_PATH builds in another folder than .build (no waiting for other SwiftPM runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
vm=${HCI_VM_DIR:-$repo/../shared/hci-vm}
data=${WAYMARK_SHARED_DATA:-$repo/../shared/data}/ruuvitag-sensor-hcidump
started=$(date +%s)

[[ -x $vm/run.sh ]] || { echo "hci-vm test: $vm/run.sh not found; set HCI_VM_DIR to the hci-vm folder" >&2; exit 1; }
scripts/setup.sh --vm

echo "hci-vm test: building waymark-edge (release, static Swift runtime)"
build=(swift build -c release --static-swift-stdlib ${HCI_VM_SCRATCH_PATH:+--scratch-path "$HCI_VM_SCRATCH_PATH"})
"${build[@]}" --product waymark-edge
bindir=$("${build[@]}" --show-bin-path)

work=$(mktemp -d /tmp/waymark-hci-vm.XXXXXX)
[[ ${HCI_VM_KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT
gcc -O2 -static -o "$work/wvctl" tests/hci-vm/vctl.c

# The shared hcidump captures as vctl `hci` lines: one event per `> ` line plus its continuations.
{
  echo once
  for f in "$data"/hcidump-2.x.txt "$data"/hcidump-3.x.txt; do
    awk 'NR <= 2 { next }
         /^> / { if (h != "") print "hci " h; h = ""; $0 = substr($0, 3) }
         { gsub(/[ \t\r]/, ""); h = h $0 }
         END { if (h != "") print "hci " h }' "$f"
  done
} > "$work/capture.txt"
# The same beacons from a controller that supports extended scanning (see vctl.c).
{ echo extended; cat tests/hci-vm/beacons.txt; } > "$work/beacons-ext.txt"
# The reference: address, RSSI and data of every report, decoded by Bumble (see the data README).
cat "$data"/hcidump-2.x.decoded.jsonl "$data"/hcidump-3.x.decoded.jsonl \
  | sed -n 's/.*"address": "\([^"]*\)", "rssi": \(-\{0,1\}[0-9]*\), "data_hex": "\([0-9a-f]*\)".*/\1 \2 \3/p' \
  | tr 'A-F' 'a-f' | sort > "$work/capture.expected"

echo "hci-vm test: booting the VM"
set +e
HCI_VM_OUT=$work/out "$vm/run.sh" --bin "$bindir/waymark-edge" --bin "$work/wvctl" \
  --bin "$(command -v hcitool)" --bin "$(command -v mosquitto)" --bin "$(command -v mosquitto_sub)" \
  --file tests/hci-vm/site.yaml:/site.yaml --file tests/hci-vm/mosquitto.conf:/mosquitto.conf \
  --file tests/hci-vm/beacons.txt:/beacons.txt --file "$work/beacons-ext.txt:/beacons-ext.txt" \
  --file "$work/capture.txt:/capture.txt" \
  --file tests/hci-vm/scenario.sh:/scenario.sh \
  --adverts tests/hci-vm/beacons.txt -- 'sh /scenario.sh' > "$work/console.txt" 2>&1
vm_rc=$?
set -e
out=$work/out
source tests/hci-vm/checks.sh
source tests/hci-vm/checks-edge.sh
run_checks "$out" "$work" "$vm_rc"
echo "hci-vm test: $((passed)) checks passed, $((failed)) failed, $(( $(date +%s) - started )) s"
if ((failed > 0)); then
  echo "hci-vm test: console of the VM run:"; sed 's/^/  | /' "$work/console.txt"
  echo "hci-vm test: vctl log:"; sed 's/^/  | /' "$out/vctl.log" 2>/dev/null || true
  exit 1
fi
