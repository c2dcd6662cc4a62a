#!/usr/bin/env python3
"""Writes the two message sequences the foreign-gateway integration tests feed through the broker
(Tests/WaymarkIntegrationTests/ForeignGatewayIntegrationTests.swift).

They are composed from the message formats the projects document — ESPresense's device topic
`espresense/devices/<id>/<room>` with `id`, `idType`, `rssi@1m`, `rssi`, `raw`, `distance`, `mac`
…; its retained `espresense/rooms/<room>/status`; Theengs Gateway / OpenMQTTGateway's
`<publish topic>/<address>` with `id`, `mac_type`, `rssi` and the Theengs decoder's iBeacon fields
or raw `manufacturerdata`; their `…/LWT` — not recorded from hardware. Each line is
{"dt": seconds from the start, "topic": …, "payload": text, "retain": bool}.

One tracked iBeacon walks three rooms (16 s each) and leaves; its room's receiver hears it about
once a second, the neighbouring rooms' receivers more weakly and less often. Around it: a phone
that only an ESPresense class fingerprint identifies (dropped), an untracked beacon, a malformed
message and a stale retained reading (both rejected and counted).

    python3 tests/foreign-captures/make-captures.py     # rewrites the .jsonl files next to it
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
UUID = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
DWELL = 16


def esp_payload(device_id, id_type, rssi, mac, rssi1m=-59):
    distance = round(10 ** ((rssi1m - rssi) / (10 * 2.7)), 2)
    return json.dumps({"mac": mac, "id": device_id, "idType": id_type, "rssi@1m": rssi1m, "rssi": rssi,
                       "raw": distance, "channel": 38, "distance": distance, "mean": distance, "var": 0.05,
                       "ci": 0.03, "int": 1012}, separators=(",", ":"))


def espresense(rng):
    rooms = ["hallway", "kitchen", "living"]
    beacon = f"iBeacon:{UUID}-1-7"
    lines = [{"dt": 0.0, "topic": f"espresense/rooms/{r}/status", "payload": "online", "retain": True} for r in rooms]
    # A stale retained reading someone left on the broker: rejected, never windowed.
    lines.append({"dt": 0.05, "topic": f"espresense/devices/{beacon}/hallway",
                  "payload": esp_payload(beacon, 180, -50, "c3f2a1b4d5e6"), "retain": True})
    for i, room in enumerate(rooms):
        start = 1.0 + i * DWELL
        t = start
        while t < start + DWELL:
            for j, other in enumerate(rooms):
                if j == i:
                    rssi = -58 + rng.randint(-3, 3)
                elif abs(j - i) == 1 and rng.random() < 0.45:
                    rssi = -86 + rng.randint(-3, 3)
                else:
                    continue
                lines.append({"dt": round(t + 0.02 * j, 3), "topic": f"espresense/devices/{beacon}/{other}",
                              "payload": esp_payload(beacon, 180, rssi, "c3f2a1b4d5e6"), "retain": False})
            t += 1.0 + rng.uniform(-0.15, 0.15)
    # A phone known only by a class fingerprint, in the kitchen all along: dropped (not_unique).
    t = 1.5
    while t < 1 + 3 * DWELL:
        lines.append({"dt": round(t, 3), "topic": "espresense/devices/apple:1005:9-26/kitchen",
                      "payload": esp_payload("apple:1005:9-26", 150, -70 + rng.randint(-4, 4), "5a11b2c3d4e5", -65), "retain": False})
        t += 5.0
    # An untracked iBeacon (another UUID), and a message cut short.
    lines.append({"dt": 9.3, "topic": "espresense/devices/iBeacon:00000000-1111-2222-3333-444444444444-9-9/living",
                  "payload": esp_payload("iBeacon:00000000-1111-2222-3333-444444444444-9-9", 180, -75, "d1e2f3a4b5c6"), "retain": False})
    lines.append({"dt": 12.1, "topic": f"espresense/devices/{beacon}/kitchen", "payload": '{"id":"' + beacon + '","rssi":-8', "retain": False})
    return sorted(lines, key=lambda l: l["dt"])


def theengs_ibeacon(address, rssi, minor):
    return json.dumps({"id": address, "mac_type": 1, "adv_type": 3, "rssi": rssi, "brand": "GENERIC", "model": "iBeacon",
                       "model_id": "IBEACON", "type": "BCON", "mfid": "4c00", "uuid": UUID.replace("-", ""),
                       "major": 1, "minor": minor, "txpower": -59}, separators=(",", ":"))


def theengs_raw(address, rssi, minor):
    data = "4c000215" + UUID.replace("-", "") + "0001" + f"{minor:04x}" + "c5"
    return json.dumps({"id": address, "mac_type": 1, "adv_type": 3, "manufacturerdata": data, "rssi": rssi},
                      separators=(",", ":"))


def theengs(rng):
    # Two OpenMQTTGateway ESP32s (raw data: "publish advertising data" on) and one Theengs Gateway.
    gateways = ["home/OMG_ESP32_BLE_entrance/BTtoMQTT", "home/TheengsGateway/BTtoMQTT", "home/OMG_ESP32_BLE_shop/BTtoMQTT"]
    raw = [True, False, True]
    address = "C3:F2:A1:B4:D5:E6"
    level = address.replace(":", "")
    lines = [{"dt": 0.0, "topic": g.rsplit("/", 1)[0] + "/LWT", "payload": "online", "retain": True} for g in gateways]
    for i in range(3):
        start = 1.0 + i * DWELL
        t = start
        while t < start + DWELL:
            for j, g in enumerate(gateways):
                if j == i:
                    rssi = -57 + rng.randint(-3, 3)
                elif abs(j - i) == 1 and rng.random() < 0.45:
                    rssi = -87 + rng.randint(-3, 3)
                else:
                    continue
                payload = theengs_raw(address, rssi, 7) if raw[j] else theengs_ibeacon(address, rssi, 7)
                lines.append({"dt": round(t + 0.02 * j, 3), "topic": f"{g}/{level}", "payload": payload, "retain": False})
            t += 1.0 + rng.uniform(-0.15, 0.15)
    # A thermometer nobody tracks, and a reading with an impossible RSSI.
    t = 2.2
    while t < 1 + 3 * DWELL:
        lines.append({"dt": round(t, 3), "topic": f"{gateways[1]}/A4C1380B1D2E",
                      "payload": json.dumps({"id": "A4:C1:38:0B:1D:2E", "mac_type": 0, "rssi": -71, "brand": "Xiaomi",
                                             "model": "LYWSD03MMC", "model_id": "LYWSD03MMC", "tempc": 21.4, "hum": 48.2},
                                            separators=(",", ":")), "retain": False})
        t += 6.0
    lines.append({"dt": 20.4, "topic": f"{gateways[1]}/{level}", "payload": theengs_ibeacon(address, 7, 7), "retain": False})
    return sorted(lines, key=lambda l: l["dt"])


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    write("espresense-walk.jsonl", espresense(random.Random(16)))
    write("theengs-walk.jsonl", theengs(random.Random(61)))
