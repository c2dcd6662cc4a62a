# Checks for run-vm-test.sh (sourced): each `check` prints PASS/FAIL with what it proves.
passed=0
failed=0

check() {  # check "what it proves" command...
  local what=$1; shift
  if "$@" >/dev/null 2>&1; then
    passed=$((passed + 1)); echo "  PASS $what"
  else
    failed=$((failed + 1)); echo "  FAIL $what"
  fi
}

# The vctl log lines of one scenario phase (between "== NAME" and the next marker).
section() { awk -v p="== $2" '$0 == p { on = 1; next } /^== / { on = 0 } on' "$1/vctl.log"; }
# The last scan on/off line of a phase says whether the controller was left scanning.
left_off() { section "$1" "$2" | grep -E '^vctl: scan (on|off)' | tail -1 | grep -q '^vctl: scan off'; }
has_scan_on() { section "$1" "$2" | grep -q '^vctl: scan on'; }
rc_is() { [[ -f $1/$2.rc && $(cat "$1/$2.rc") == "$3" ]]; }
err_has() { grep -qF -- "$3" "$1/$2.err"; }
# address rssi data of each report a `waymark-edge scan` printed
reports() { sed -n 's/.*"address":"\([^"]*\)".*"rssi":\(-\{0,1\}[0-9]*\),"data":"\([0-9a-f]*\)".*/\1 \2 \3/p' "$1"; }
rssi_of() { grep -F "\"device_id\":\"$2\"" "$1" | sed -n 's/.*"rssi":\(-\{0,1\}[0-9]*\),.*/\1/p' | sort -un | tr '\n' ' '; }
rssi_set_is() { [[ "$(rssi_of "$1" "$2")" == "$3" ]]; }
lines_equal() { [[ $1 -gt 0 && $1 == "$2" ]]; }
sent_in() { section "$1" "$2" | sed -n 's/^vctl: scan off sent=\([0-9]*\)/\1/p' | tail -1; }
summary_events() { sed -n 's/^waymark-edge scan: \([0-9]*\) events.*/\1/p' "$1" | tail -1; }
count_ge() { [[ $1 -ge $2 ]]; }

run_checks() {
  local out=$1 work=$2 vm_rc=$3
  local ib=ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2
  local ed=eddystone:00112233445566778899:a1b2c3d4e5f6
  local ab=altbeacon:01234567-89ab-cdef-0123-456789abcdef:7:9
  local ib2=ibeacon:5a4bcfce-174e-4bac-a814-092e77f6b7e5:100:200
  local ed2=eddystone:ffeeddccbbaa99887766:000000000001
  echo "hci-vm test: checks"
  check "the VM ran the scenario to its end" grep -q "scenario: end" "$work/console.txt"
  check "the scenario exited 0 (run.sh status $vm_rc)" [ "$vm_rc" = 0 ]

  # beacons: identities, RSSI, parameters, completeness, normal stop
  check "beacons: waymark-edge scan --seconds 3 exited 0" rc_is "$out" beacons 0
  check "beacons: LE Set Scan Parameters reached the controller (passive, 100 ms = 160 units)" \
    eval "section '$out' beacons | grep -q 'vctl: scan parameters type=0 interval=160 window=160'"
  check "beacons: scanning enabled with duplicate filtering off" \
    eval "section '$out' beacons | grep -q 'vctl: scan on filter_dup=0'"
  check "beacons: iBeacon $ib with RSSI -70 -65 -60" rssi_set_is "$out/beacons.jsonl" "$ib" "-70 -65 -60 "
  check "beacons: Eddystone-UID $ed with RSSI -81 -75" rssi_set_is "$out/beacons.jsonl" "$ed" "-81 -75 "
  check "beacons: AltBeacon $ab with RSSI -59 -55" rssi_set_is "$out/beacons.jsonl" "$ab" "-59 -55 "
  check "beacons: other iBeacon $ib2 with RSSI -68" rssi_set_is "$out/beacons.jsonl" "$ib2" "-68 "
  check "beacons: other Eddystone $ed2 with RSSI -90" rssi_set_is "$out/beacons.jsonl" "$ed2" "-90 "
  check "beacons: every report the controller sent was printed ($(sent_in "$out" beacons) sent, $(wc -l < "$out/beacons.jsonl") printed)" \
    lines_equal "$(sent_in "$out" beacons)" "$(wc -l < "$out/beacons.jsonl")"
  check "beacons: no undecodable events" eval "! grep -q '\"error\"' '$out/beacons.jsonl'"
  check "beacons: scanning off after a normal stop" left_off "$out" beacons

  check "sigterm: scanning was on" has_scan_on "$out" sigterm
  check "sigterm: exited 0 after SIGTERM" rc_is "$out" sigterm 0
  check "sigterm: scanning off after SIGTERM" left_off "$out" sigterm
  check "sigterm: reports printed before SIGTERM" test -s "$out/sigterm.jsonl"

  check "conflict: second scanner refused (exit 1)" rc_is "$out" conflict 1
  check "conflict: controller answered Command Disallowed" \
    eval "section '$out' conflict | grep -q 'vctl: scan parameters refused'"
  check "conflict: message names the conflict and how to stop it" err_has "$out" conflict "scan-conflict: hci0 refused LE Set Scan Parameters because LE scanning is already on: bluetoothd or another program is scanning"
  check "conflict: message says bluetoothctl scan off" err_has "$out" conflict "bluetoothctl scan off"
  check "conflict: the first scanner kept scanning and stopped cleanly" rc_is "$out" conflict-first 0
  check "conflict: scanning off at the end" left_off "$out" conflict

  check "capabilities: unprivileged scan refused (exit 1)" rc_is "$out" capabilities 1
  check "capabilities: names the systemd setting" err_has "$out" capabilities "AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN"
  check "capabilities: names the setcap line for this binary" err_has "$out" capabilities "setcap cap_net_raw,cap_net_admin+eip /bin/waymark"

  check "down: refused (exit 1)" rc_is "$out" down 1
  check "down: says hci0 is down and how to bring it up" err_has "$out" down "adapter-down: Bluetooth adapter hci0 is down; bring it up with \`hciconfig hci0 up\`"

  check "recover: exited 0" rc_is "$out" recover 0
  check "recover: reported recovering after down, reset, unplug and foreign disable" count_ge "$(grep -c 'waymark-edge scan: recovering (attempt 1)' "$out/recover.err")" 4
  check "recover: scanning again after each (5 × scanning)" count_ge "$(grep -c 'waymark-edge scan: scanning hci0' "$out/recover.err")" 5
  check "recover: re-enabled after down/up" has_scan_on "$out" recover-down
  check "recover: re-enabled after HCI reset" eval "section '$out' recover-reset | grep -A9 'vctl: reset' | grep -q 'vctl: scan on'"
  check "recover: re-enabled on the re-plugged controller" has_scan_on "$out" recover-unplug
  check "recover: noticed another program switching scanning off" err_has "$out" recover "another program (bluetoothd discovery, hcitool, a second scanner) switched LE scanning on hci0"
  check "recover: re-enabled after the foreign disable" \
    eval "section '$out' recover-foreign | grep -A9 'vctl: scan off' | grep -q 'vctl: scan on'"
  check "recover: reports after the re-plug and foreign disable ($(sent_in "$out" recover-stop) sent)" count_ge "$(sent_in "$out" recover-stop)" 1
  check "recover: scanning off after SIGTERM" left_off "$out" recover-stop

  check "extended: exited 0" rc_is "$out" extended 0
  check "extended: LE Set Extended Scan Parameters reached the controller (passive, 160 units, LE 1M)" \
    eval "section '$out' extended | grep -q 'vctl: scan parameters type=0 interval=160 window=160 extended phys=1'"
  check "extended: LE Set Extended Scan Enable, duplicates kept" \
    eval "section '$out' extended | grep -q 'vctl: scan on filter_dup=0 extended'"
  check "extended: the scanner reported extended mode" err_has "$out" extended "scanning hci0 (extended)"
  check "extended: reports arrived as extended reports" eval "grep -q '\"format\":\"extended\"' '$out/extended.jsonl' && ! grep -q '\"format\":\"legacy\"' '$out/extended.jsonl'"
  check "extended: iBeacon $ib with RSSI -70 -65 -60" rssi_set_is "$out/extended.jsonl" "$ib" "-70 -65 -60 "
  check "extended: Eddystone-UID $ed with RSSI -81 -75" rssi_set_is "$out/extended.jsonl" "$ed" "-81 -75 "
  check "extended: AltBeacon $ab with RSSI -59 -55" rssi_set_is "$out/extended.jsonl" "$ab" "-59 -55 "
  check "extended: every report sent was printed ($(sent_in "$out" extended) sent, $(wc -l < "$out/extended.jsonl") printed)" \
    lines_equal "$(sent_in "$out" extended)" "$(wc -l < "$out/extended.jsonl")"
  check "extended: scanning off after stop" left_off "$out" extended
  check "extended --legacy: legacy commands and legacy reports" \
    eval "section '$out' extended-forced-legacy | grep -q 'vctl: scan on filter_dup=0\$' && grep -q '\"format\":\"legacy\"' '$out/forced-legacy.jsonl'"
  check "extended --legacy: scanning off after stop" left_off "$out" extended-forced-legacy

  reports "$out/capture.jsonl" | sort > "$work/capture.got"
  check "capture: vctl sent every captured event" eval "section '$out' capture | grep -q 'vctl: done'"
  check "capture: all $(wc -l < "$work/capture.expected") reports received ($(wc -l < "$work/capture.got"))" \
    lines_equal "$(wc -l < "$work/capture.expected")" "$(wc -l < "$work/capture.got")"
  check "capture: every report's address, RSSI and data equal the reference decoding" \
    cmp -s "$work/capture.expected" "$work/capture.got"
  check "capture: the scanner counted as many events as vctl sent" \
    lines_equal "$(sent_in "$out" capture)" "$(summary_events "$out/capture.err")"
  check "capture: scanning off at the end" left_off "$out" capture

  run_edge_checks "$out" "$ib" "$ed" "$ab" "$ib2" "$ed2"

  check "no-adapter: refused (exit 1)" rc_is "$out" no-adapter 1
  check "no-adapter: lists what was found and where to look" err_has "$out" no-adapter "no-adapter: Bluetooth adapter hci0 not found; no Bluetooth adapters found. Check \`hciconfig -a\` or \`btmgmt info\`"
  check "no-adapter: mentions the dongle and rfkill" err_has "$out" no-adapter "rfkill unblock bluetooth"
}
