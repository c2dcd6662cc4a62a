import WaymarkConfig
import WaymarkCore
import WaymarkPostgres

/// A simulated fortnight at a small venue with known ground truth: devices walking the beacon
/// graph from the entrance, with dwell times in every report bucket (some over 6 h, spanning hours
/// and days), inferred steps, passers-by heard at the entrance, and gateway status history. Built
/// from a seeded generator so every run sees the same data; inserted with COPY like the aggregator.
struct ReportFixture {
    struct Visit { var device: String; var region: String; var entered: Int64; var exited: Int64; var inferred: Bool; var journey: Int }
    struct Journey { var device: String; var started: Int64; var ended: Int64; var regions: [String] }
    struct Transition { var device: String; var from: String; var to: String; var at: Int64; var inferred: Bool }
    struct Heard { var region: String; var device: String; var hour: Int64; var first: Int64; var last: Int64 }
    struct Status { var gateway: String; var at: Int64; var online: Bool; var boot: String?; var depth: Int?; var dropped: Int? }
    struct Ingest { var gateway: String; var hour: Int64; var batches: Int64; var sightings: Int64; var last: Int64 }
    struct Rejection { var gateway: String; var hour: Int64; var reason: String; var count: Int64 }

    static let start: Int64 = 1_780_272_000  // 2026-06-01T00:00:00Z, a Monday
    static let days = 14
    static let siteYAML = """
        site: report-test
        gateways:
          - { id: gw-entrance, position: [0, 0] }
          - { id: gw-lobby, position: [10, 0] }
          - { id: gw-hall-a, position: [20, 8] }
          - { id: gw-hall-b, position: [20, -8] }
          - { id: gw-cafe, position: [10, -12] }
          - { id: gw-shop, position: [0, -12] }
        regions:
          - { id: entrance, name: "Main entrance", gateways: [gw-entrance], entrance: true }
          - { id: lobby, name: Lobby, gateways: [gw-lobby] }
          - { id: hall-a, name: "Hall A", gateways: [gw-hall-a] }
          - { id: hall-b, name: "Hall B", gateways: [gw-hall-b] }
          - { id: cafe, name: "Café & bar", gateways: [gw-cafe] }
          - { id: shop, name: Shop, gateways: [gw-shop] }
        edges:
          - [entrance, lobby]
          - [lobby, hall-a]
          - [lobby, hall-b]
          - [hall-a, hall-b]
          - [lobby, cafe]
          - [cafe, shop]
          - [shop, entrance]
        tracking:
          ibeacon_uuids: ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"]
        """

    let site: Site
    var visits: [Visit] = []
    var journeys: [Journey] = []
    var transitions: [Transition] = []
    var heard: [Heard] = []
    var statuses: [Status] = []
    var ingest: [Ingest] = []
    var rejections: [Rejection] = []

    init(seed: UInt64 = 7, devices: Int = 60) throws {
        site = try SiteLoader.parse(yaml: Self.siteYAML).site
        var rng = SplitMix64(seed: seed)
        let end = Self.start + Int64(Self.days) * 86_400
        for d in 0..<devices {
            let device = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:\(d)"
            var t = Self.start + rng.int(0..<(3 * 86_400))
            while t < end - 3600 {
                walk(device: device, at: t, rng: &rng)
                t = journeys.last!.ended + 1800 + rng.int(0..<(3 * 86_400))
            }
        }
        // Passers-by: heard at the entrance, never inside; and some visitors heard on other days.
        for _ in 0..<120 {
            let at = Self.start + rng.int(0..<(Int64(Self.days) * 86_400))
            let device = rng.int(0..<4) == 0 ? "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:\(rng.int(0..<Int64(devices)))"
                                             : "mac:02-00-00-00-00-\(rng.int(10..<60))"
            hear(device: device, at: at)
        }
        gatewayHistory(rng: &rng)
    }

    /// One journey: entrance first, then a walk to neighbouring regions.
    mutating func walk(device: String, at start: Int64, rng: inout SplitMix64) {
        let index = journeys.count
        var region = "entrance"
        var t = start
        var path: [String] = []
        let steps = 1 + Int(rng.int(0..<6))
        for step in 0...steps {
            let inferred = step > 0 && step < steps && rng.int(0..<10) == 0
            let dwell = inferred ? 5 + rng.int(0..<40) : Self.dwell(rng: &rng)
            visits.append(Visit(device: device, region: region, entered: t, exited: t + dwell, inferred: inferred, journey: index))
            if let previous = path.last {
                transitions.append(Transition(device: device, from: previous, to: region, at: t, inferred: inferred))
            }
            if step == 0 { hear(device: device, at: t) }
            path.append(region)
            t += dwell
            if step < steps {
                let next = site.graph.adjacency[site.regionIndex(region)!].map { site.regions[$0.region].id }
                region = next[Int(rng.int(0..<Int64(next.count)))]
                t += rng.int(0..<30)
            }
        }
        journeys.append(Journey(device: device, started: start, ended: visits.last!.exited, regions: path))
    }

    /// Dwell seconds spread over all report buckets, including a few visits of 6 h or more.
    static func dwell(rng: inout SplitMix64) -> Int64 {
        switch rng.int(0..<100) {
        case 0..<40: 20 + rng.int(0..<280)
        case 40..<65: 300 + rng.int(0..<900)
        case 65..<82: 1200 + rng.int(0..<2400)
        case 82..<97: 3600 + rng.int(0..<18_000)
        default: 21_600 + rng.int(0..<10_000)
        }
    }

    mutating func hear(device: String, at: Int64) {
        let hour = at - at % 3600
        if let i = heard.firstIndex(where: { $0.device == device && $0.hour == hour }) {
            heard[i].first = min(heard[i].first, at)
            heard[i].last = max(heard[i].last, at)
        } else {
            heard.append(Heard(region: "entrance", device: device, hour: hour, first: at, last: at))
        }
    }

    /// Each gateway: boots, online/offline changes with spool depth and drop counters, hourly
    /// ingest counters and a few rejections.
    mutating func gatewayHistory(rng: inout SplitMix64) {
        for (g, gateway) in site.gateways.enumerated() where g < site.gateways.count - 1 {  // the last one never reports
            var t = Self.start - 7200 + rng.int(0..<3600)
            var boot = 0
            var dropped = 0
            var online = true
            while t < Self.start + Int64(Self.days) * 86_400 {
                if online {
                    dropped += Int(rng.int(0..<3))
                    statuses.append(Status(gateway: gateway.id, at: t, online: true, boot: "b\(g)-\(boot)",
                                           depth: Int(rng.int(0..<50)), dropped: dropped))
                } else {
                    statuses.append(Status(gateway: gateway.id, at: t, online: false, boot: nil, depth: nil, dropped: nil))
                }
                t += 600 + rng.int(0..<40_000)
                if rng.int(0..<4) == 0 { online.toggle(); if online { boot += 1; dropped = 0 } }
            }
            for h in stride(from: Self.start - 3600, to: Self.start + Int64(Self.days) * 86_400, by: 3600) where rng.int(0..<3) > 0 {
                let batches = 1 + rng.int(0..<3600)
                ingest.append(Ingest(gateway: gateway.id, hour: h, batches: batches, sightings: batches * (1 + rng.int(0..<20)),
                                     last: h + rng.int(0..<3600)))
                if rng.int(0..<20) == 0 {
                    rejections.append(Rejection(gateway: gateway.id, hour: h, reason: rng.int(0..<2) == 0 ? "malformed" : "duplicate",
                                                count: 1 + rng.int(0..<9)))
                }
            }
        }
    }
}

/// A small, fast, seeded generator (SplitMix64), so the fixture is the same on every run.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in the range.
    mutating func int(_ range: Range<Int64>) -> Int64 {
        range.lowerBound + Int64(next() % UInt64(range.upperBound - range.lowerBound))
    }
}
