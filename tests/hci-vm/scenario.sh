# Runs inside the hci-vm (busybox sh) for tests/hci-vm/run-vm-test.sh; results go to /out and are
# checked on the host. Replaces the shared vctl with the project's (/bin/wvctl, see vctl.c), then
# exercises `waymark-edge scan` phase by phase. Markers "== PHASE" in /out/vctl.log separate phases.
out=/out
vlog=$out/vctl.log
bb=busybox

mark() { echo "== $1" >> $vlog; echo "scenario: $1"; }
# true once the vctl started in the current phase has sent its `once` list
section_done() { $bb awk '/^== /{d=0} /vctl: done/{d=1} END{exit !d}' $vlog; }

wait_for() {  # wait_for present|absent: hci0 in sysfs, up to 10 s
  i=0
  while [ $i -lt 50 ]; do
    if [ "$1" = present ] && [ -e /sys/class/bluetooth/hci0 ]; then return 0; fi
    if [ "$1" = absent ] && [ ! -e /sys/class/bluetooth/hci0 ]; then return 0; fi
    sleep 0.2; i=$((i+1))
  done
  echo "scenario: hci0 never became $1"; return 1
}

stop_vctls() {
  for p in $($bb pidof vctl wvctl); do kill $p; done
  wait_for absent
}

start_vctl() {  # start_vctl ADVERTS
  wvctl "$1" 2>> $vlog &
  wait_for present && hciconfig hci0 up
}

scan_bg() {  # scan_bg NAME: waymark-edge scan until SIGTERM, output to /out/NAME.*
  waymark-edge scan --adapter hci0 --seconds 0 > $out/$1.jsonl 2> $out/$1.err &
  bg=$!
}

finish_bg() {  # finish_bg NAME: SIGTERM the background scan and record its exit status
  kill -TERM $bg; wait $bg; echo $? > $out/$1.rc
}

stop_vctls
mark start
start_vctl /beacons.txt

mark beacons
waymark-edge scan --adapter hci0 --seconds 3 > $out/beacons.jsonl 2> $out/beacons.err; echo $? > $out/beacons.rc

mark sigterm
scan_bg sigterm; sleep 2; finish_bg sigterm

mark conflict
scan_bg conflict-first; sleep 2
waymark-edge scan --adapter hci0 --seconds 1 > /dev/null 2> $out/conflict.err; echo $? > $out/conflict.rc
finish_bg conflict-first

mark capabilities
# an ordinary user: switching from root to uid 1000 drops every capability
echo "scanner:x:1000:1000::/tmp:/bin/sh" >> /etc/passwd
chmod 755 /   # run.sh's initramfs root is a mktemp folder (0700)
$bb su -s /bin/sh scanner -c "waymark-edge scan --adapter hci0 --seconds 1" > /dev/null 2> $out/capabilities.err
echo $? > $out/capabilities.rc

mark down
hciconfig hci0 down
waymark-edge scan --adapter hci0 --seconds 1 > /dev/null 2> $out/down.err; echo $? > $out/down.rc
hciconfig hci0 up

mark recover-down-up
scan_bg recover; sleep 2
mark recover-down; hciconfig hci0 down; sleep 1.5; hciconfig hci0 up; sleep 3
mark recover-reset; hciconfig hci0 reset; sleep 3
mark recover-unplug; stop_vctls; sleep 1; start_vctl /beacons.txt; sleep 5
mark recover-foreign; hcitool -i hci0 cmd 0x08 0x000c 00 00 > /dev/null; sleep 3
mark recover-stop
finish_bg recover

mark extended
stop_vctls; start_vctl /beacons-ext.txt
waymark-edge scan --adapter hci0 --seconds 3 > $out/extended.jsonl 2> $out/extended.err; echo $? > $out/extended.rc
mark extended-forced-legacy
waymark-edge scan --adapter hci0 --seconds 2 --legacy > $out/forced-legacy.jsonl 2> $out/forced-legacy.err
echo $? > $out/forced-legacy.rc

mark capture
stop_vctls; start_vctl /capture.txt
scan_bg capture
i=0; while ! section_done && [ $i -lt 120 ]; do sleep 0.5; i=$((i+1)); done
sleep 1; finish_bg capture

# The edge agent: waymark-edge scans hci0 and publishes to a broker in the VM.
edge() {  # edge NAME ARGS...: waymark-edge in the background, logs to /out/NAME.err, MQTT to NAME.mqtt
  name=$1; shift
  mosquitto_sub -h 127.0.0.1 -p 1883 -q 1 -t 'waymark/v1/hci-vm/#' -v > $out/$name.mqtt 2> $out/$name.sub.err &
  sub=$!
  sleep 0.5
  waymark-edge --site /site.yaml --gateway gw-vm --broker mqtt://127.0.0.1:1883 \
    --spool-dir /tmp/spool-$name --metrics-port 9464 "$@" > $out/$name.out 2> $out/$name.err &
  bg=$!
}
metrics() { $bb wget -q -O $out/$1.metrics http://127.0.0.1:9464/metrics; }
finish_edge() { finish_bg $1; sleep 0.5; kill $sub; }

$bb ip link set lo up
mosquitto -c /mosquitto.conf > $out/mosquitto.log 2>&1 &
broker=$!
sleep 1

mark edge
stop_vctls; start_vctl /beacons.txt
edge edge --source hci0; sleep 5; metrics edge; finish_edge edge

mark edge-recover
stop_vctls; start_vctl /beacons.txt
edge edge-recover --source hci0; sleep 3; hciconfig hci0 reset; sleep 4; finish_edge edge-recover

mark edge-capture
stop_vctls; start_vctl /capture.txt
edge edge-capture --source hci0
i=0; while ! section_done && [ $i -lt 120 ]; do sleep 0.5; i=$((i+1)); done
sleep 2; metrics edge-capture; finish_edge edge-capture

mark edge-down
hciconfig hci0 down
waymark-edge --site /site.yaml --gateway gw-vm --broker mqtt://127.0.0.1:1883 --spool-dir /tmp/spool-down \
  --metrics-port 0 --source hci0 > /dev/null 2> $out/edge-down.err; echo $? > $out/edge-down.rc
hciconfig hci0 up

mark no-adapter
stop_vctls
waymark-edge scan --adapter hci0 --seconds 1 > /dev/null 2> $out/no-adapter.err; echo $? > $out/no-adapter.rc
waymark-edge --site /site.yaml --gateway gw-vm --broker mqtt://127.0.0.1:1883 --spool-dir /tmp/spool-none \
  --metrics-port 0 --source hci0 > /dev/null 2> $out/edge-no-adapter.err; echo $? > $out/edge-no-adapter.rc
kill $broker
mark end
