import WaymarkConfig
import WaymarkCore

/// A test venue: `count` regions in a line, 10 m apart, one gateway each (`gw-0` …), every
/// region with an iBeacon identity (major 1, minor = index).
enum LineVenue {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func yaml(site: String = "line", count: Int, monitored: Int = 20) -> String {
        var y = "site: \(site)\ngateways:\n"
        for i in 0..<count { y += "  - { id: gw-\(i), position: [\(Double(i) * 10), 0.0] }\n" }
        y += "regions:\n"
        for i in 0..<count {
            y += "  - { id: r\(i), gateways: [gw-\(i)], radius_m: 3.0\(i == 0 ? ", entrance: true" : ""), ibeacon: { uuid: \"\(uuid)\", major: 1, minor: \(i) } }\n"
        }
        y += "edges:\n"
        for i in 1..<max(count, 2) where i < count { y += "  - [r\(i - 1), r\(i)]\n" }
        y += "tracking:\n  ibeacon_uuids: [\"\(uuid)\"]\nfusion:\n  monitored_set_size: \(monitored)\n"
        return y
    }

    static func site(count: Int, monitored: Int = 20) throws -> Site {
        try SiteLoader.parse(yaml: yaml(count: count, monitored: monitored)).site
    }

    static func device(_ n: Int) -> DeviceID {
        DeviceID.ibeacon(uuid: BeaconUUID(uuid)!, major: 7, minor: UInt16(n))
    }
}

/// Deterministic sightings of devices walking along a `LineVenue`, and their batches.
struct LineWalk {
    struct Record: Hashable {
        var t: Double
        var gateway: Int
        var device: DeviceID
        var rssi: Double
    }

    /// Each device stays `dwell` seconds at each region of `path`, heard every second by the
    /// region's gateway (strong) and its neighbours (weak); devices start `stagger` s apart.
    static func records(devices: Int, path: [Int], dwell: Int, start: Double, stagger: Double = 7, regions: Int) -> [Record] {
        var out: [Record] = []
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func jitter() -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double((seed >> 33) % 600) / 100 - 3
        }
        for d in 0..<devices {
            var t = start + Double(d) * stagger
            for region in path {
                for _ in 0..<dwell {
                    for g in max(0, region - 1)...min(regions - 1, region + 1) {
                        let rssi = (g == region ? -52.0 : -84.0) + jitter()
                        out.append(Record(t: t + Double(g - region + 1) * 0.01 + Double(d) * 0.001, gateway: g,
                                          device: LineVenue.device(d), rssi: rssi.rounded()))
                    }
                    t += 1
                }
            }
        }
        return out.sorted { ($0.t, $0.gateway) < ($1.t, $1.gateway) }
    }

    /// Consecutive records of the same gateway become one batch, so that processing the batches
    /// in order feeds the engine exactly the time-ordered records.
    static func batches(_ records: [Record], boot: String = "boot-1", firstSeq: UInt64 = 1) -> [SightingBatch] {
        var out: [SightingBatch] = []
        var seq: [Int: UInt64] = [:]
        var i = 0
        while i < records.count {
            var j = i
            while j < records.count && records[j].gateway == records[i].gateway { j += 1 }
            let run = records[i..<j]
            let g = records[i].gateway
            let s = seq[g] ?? firstSeq
            seq[g] = s + 1
            out.append(SightingBatch(gateway: "gw-\(g)", boot: boot, seq: s, start: run.first!.t, end: run.last!.t,
                                     sightings: run.map { .init(device: $0.device, count: 1, rssiMax: $0.rssi, rssiMean: $0.rssi,
                                                                rssiLast: $0.rssi, tx: -59, first: $0.t, last: $0.t) }))
            i = j
        }
        return out
    }
}
