# Checks of the edge-agent phases for run-vm-test.sh (sourced after checks.sh): what waymark-edge
# published to the broker in the VM, read with jq.

# the sighting batches one agent run published, as a JSON array
batches() { grep -F "/gateways/gw-vm/sightings " "$1" | cut -d' ' -f2- | jq -s '.'; }
statuses() { grep -F "/gateways/gw-vm/status " "$1" | cut -d' ' -f2- | jq -s '.'; }
devices_are() { [[ "$(batches "$1" | jq -r '[.[].sightings[].device] | unique | .[]' | tr '\n' ' ')" == "$2" ]]; }
device_count() { batches "$1" | jq --arg d "$2" '[.[].sightings[] | select(.device == $d) | .count] | add // 0'; }
device_max() { batches "$1" | jq --arg d "$2" '[.[].sightings[] | select(.device == $d) | .rssi_max] | max'; }
device_mean() { batches "$1" | jq --arg d "$2" '[.[].sightings[] | select(.device == $d)] | ((map(.count * .rssi_mean) | add) / (map(.count) | add))'; }
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d < 0.01 && d > -0.01) }'; }
metric() { awk -v m="$2" '$1 == m { print $2 + 0 }' "$1"; }
# tracked plus every filtered{reason} counter
metric_sum() { awk '$1 == "waymark_edge_tracked_total" || $1 ~ /^waymark_edge_filtered_total\{/ { s += $2 } END { print s + 0 }' "$1"; }
# vctl sends beacons.txt round-robin from its first entry: iBeacon -60 -70 -65, Eddystone -75 -81,
# AltBeacon -55 -59, then the two untracked. $1 = entries sent; prints count and exact mean for
# entries [from, from+k) of each 9-entry cycle with RSSI list $3.
# SENT may be "N1 N2 …" for several scan sessions of one vctl (its position carries over).
expected() {  # expected SENT FROM RSSI...: "count mean"; SKIP (env, default -1): an advert index not received
  local sent=$1 from=$2; shift 2
  awk -v sessions="$sent" -v f="$from" -v list="$*" -v skip="${SKIP:--1}" 'BEGIN {
    k = split(list, r, " "); m = split(sessions, ns, " "); c = 0; s = 0; p = 0
    for (x = 1; x <= m; x++) for (i = 0; i < ns[x]; i++) { j = p % 9 - f; if (p != skip && j >= 0 && j < k) { c++; s += r[j + 1] }; p++ }
    printf "%d %.4f\n", c, (c ? s / c : 0) }'
}
# every "scan off sent=N" of a phase, in order
sent_all() { section "$1" "$2" | sed -n 's/^vctl: scan off sent=\([0-9]*\)/\1/p' | tr '\n' ' '; }
scan_sequence() { statuses "$1" | jq -r '[.[] | select(.state == "online") | .scan] | reduce .[] as $s ([]; if (.[-1] // "") == $s then . else . + [$s] end) | join(" ")'; }

run_edge_checks() {
  local out=$1 ib=$2 ed=$3 ab=$4 ib2=$5 ed2=$6
  local m=$out/edge.mqtt sent
  sent=$(sent_in "$out" edge)
  check "edge: waymark-edge exited 0 after SIGTERM" rc_is "$out" edge 0
  check "edge: scanning passive at 100 ms, duplicates kept" \
    eval "section '$out' edge | grep -q 'vctl: scan parameters type=0 interval=160 window=160' && section '$out' edge | grep -q 'vctl: scan on filter_dup=0'"
  check "edge: scanning off after SIGTERM" left_off "$out" edge
  check "edge: batches published ($(batches "$m" | jq length))" count_ge "$(batches "$m" | jq length)" 2
  check "edge: every batch is v1 from gw-vm with one boot and consecutive seq" \
    eval "batches '$m' | jq -e 'all(.[]; .v == 1 and .gateway == \"gw-vm\") and ([.[].boot] | unique | length == 1) and (([.[].seq] | sort) as \$s | \$s == [range(\$s[0]; \$s[0] + (\$s | length))])'"
  check "edge: exactly the tracked iBeacon, Eddystone and AltBeacon were published" devices_are "$m" "$ab $ed $ib "
  check "edge: untracked iBeacon $ib2 not published" eval "! grep -qF '$ib2' '$m'"
  check "edge: untracked Eddystone $ed2 not published" eval "! grep -qF '$ed2' '$m'"
  local want dev from rssi max
  for spec in "$ib 0 -60 -70 -65" "$ed 3 -75 -81" "$ab 5 -55 -59"; do
    set -- $spec; dev=$1; from=$2; shift 2; rssi="$*"
    want=$(expected "$sent" "$from" $rssi)
    max=$(printf '%s\n' $rssi | sort -n | tail -1)
    check "edge: ${dev%%:*} count = ${want% *} of $sent adverts sent" [ "$(device_count "$m" "$dev")" = "${want% *}" ]
    check "edge: ${dev%%:*} RSSI mean = ${want#* } (got $(device_mean "$m" "$dev"))" near "$(device_mean "$m" "$dev")" "${want#* }"
    check "edge: ${dev%%:*} RSSI max = $max" [ "$(device_max "$m" "$dev")" = "$max" ]
  done
  check "edge: status said scanning (scan: on) while running" \
    eval "statuses '$m' | jq -e 'any(.state == \"online\" and .scan == \"on\")'"
  check "edge: last status is offline" eval "statuses '$m' | jq -e '.[-1].state == \"offline\"'"

  local r=$out/edge-recover.mqtt sessions
  sessions=$(sent_all "$out" edge-recover)
  check "edge-recover: exited 0, scanning off at the end" eval "rc_is '$out' edge-recover 0 && left_off '$out' edge-recover"
  check "edge-recover: HCI reset, then the scanner re-applied parameters and scanning" \
    eval "section '$out' edge-recover | grep -A9 'vctl: reset' | grep -q 'vctl: scan on'"
  check "edge-recover: two scan sessions around the reset (sent: $sessions)" eval "[ \$(echo $sessions | wc -w) = 2 ]"
  check "edge-recover: status scan went on → off → on (got: $(scan_sequence "$r"))" \
    eval "scan_sequence '$r' | grep -q 'on off on'"
  # The advert the controller sends as the reset hits may be counted as sent and never reach the
  # host (seen once in four runs on a loaded machine): across the reset the counts and means must
  # match either every advert sent or all but the first session's last one, exactly.
  local lastOfFirst=$(( ${sessions%% *} - 1 )) got mean alt
  for spec in "$ib 0 -60 -70 -65" "$ed 3 -75 -81" "$ab 5 -55 -59"; do
    set -- $spec; dev=$1; from=$2; shift 2; rssi="$*"
    want=$(expected "$sessions" "$from" $rssi)
    alt=$(SKIP=$lastOfFirst expected "$sessions" "$from" $rssi)
    got=$(device_count "$r" "$dev"); mean=$(device_mean "$r" "$dev")
    check "edge-recover: ${dev%%:*} count = ${want% *} across the reset, or ${alt% *} if the advert at the reset was lost (got $got)" \
      eval "[ '$got' = '${want% *}' ] || [ '$got' = '${alt% *}' ]"
    check "edge-recover: ${dev%%:*} RSSI mean = ${want#* } (or ${alt#* }; got $mean)" \
      eval "{ [ '$got' = '${want% *}' ] && near '$mean' '${want#* }'; } || { [ '$got' = '${alt% *}' ] && near '$mean' '${alt#* }'; }"
  done

  local c=$out/edge-capture.metrics
  check "edge-capture: vctl sent every captured event" eval "section '$out' edge-capture | grep -q 'vctl: done'"
  check "edge-capture: the agent counted all 814 adverts (got $(metric "$c" waymark_edge_adverts_total))" \
    [ "$(metric "$c" waymark_edge_adverts_total)" = 814 ]
  check "edge-capture: all 814 decoded (got $(metric "$c" waymark_edge_decoded_total))" \
    [ "$(metric "$c" waymark_edge_decoded_total)" = 814 ]
  check "edge-capture: every advert tracked or filtered with a reason (sum $(metric_sum "$c"))" [ "$(metric_sum "$c")" = 814 ]
  check "edge-capture: exited 0 and scanning off" eval "rc_is '$out' edge-capture 0 && left_off '$out' edge-capture"

  check "edge-down: refused to run (exit != 0)" eval "[ -f '$out/edge-down.rc' ] && [ \"\$(cat '$out/edge-down.rc')\" != 0 ]"
  check "edge-down: says hci0 is down and how to bring it up" err_has "$out" edge-down "hciconfig hci0 up"
  check "edge-no-adapter: refused to run (exit != 0)" eval "[ -f '$out/edge-no-adapter.rc' ] && [ \"\$(cat '$out/edge-no-adapter.rc')\" != 0 ]"
  check "edge-no-adapter: says hci0 was not found and where to look" err_has "$out" edge-no-adapter "Bluetooth adapter hci0 not found"
}
