import Foundation
import WaymarkConfig
import WaymarkCore
@testable import WaymarkFusion

/// Venues, signal model and a driver with a controllable clock for the engine tests.
enum Venue {
    /// `n` regions `r0…` in a row along x, `spacing` metres apart, one gateway `g<i>` each, edges
    /// between neighbours. `levelKnown`: the site file gives the venue's level
    /// (`calibration.measured_power_offset_db: 0`, as `waymark site calibrate --write` would for
    /// readings made with `rssi(atDistance:)`), so the engine does not treat it as uncertain while
    /// it learns it (`VenueCalibration.levelVariance`, `reach`).
    static func line(_ n: Int, spacing: Double = 10, radius: Double = 3, fusion: String = "", levelKnown: Bool = false) throws -> Site {
        var gateways: [(String, Double, Double)] = []
        var regions: [(String, [String])] = []
        var edges: [(String, String)] = []
        for i in 0..<n {
            gateways.append(("g\(i)", Double(i) * spacing, 0))
            regions.append(("r\(i)", ["g\(i)"]))
            if i > 0 { edges.append(("r\(i - 1)", "r\(i)")) }
        }
        return try site(gateways: gateways, regions: regions, edges: edges, radius: radius, fusion: fusion, levelKnown: levelKnown)
    }

    /// A `cols` × `rows` grid of regions `r<x>_<y>` `spacing` metres apart, 4-neighbour edges.
    static func grid(cols: Int, rows: Int, spacing: Double = 10, radius: Double = 3, fusion: String = "",
                     levelKnown: Bool = false) throws -> Site {
        var gateways: [(String, Double, Double)] = []
        var regions: [(String, [String])] = []
        var edges: [(String, String)] = []
        for y in 0..<rows {
            for x in 0..<cols {
                gateways.append(("g\(x)_\(y)", Double(x) * spacing, Double(y) * spacing))
                regions.append(("r\(x)_\(y)", ["g\(x)_\(y)"]))
                if x > 0 { edges.append(("r\(x - 1)_\(y)", "r\(x)_\(y)")) }
                if y > 0 { edges.append(("r\(x)_\(y - 1)", "r\(x)_\(y)")) }
            }
        }
        return try site(gateways: gateways, regions: regions, edges: edges, radius: radius, fusion: fusion, levelKnown: levelKnown)
    }

    /// `centres`: regions placed explicitly (by default each sits at its gateways' mean position);
    /// `radii`: regions with another radius than `radius`.
    static func site(gateways: [(String, Double, Double)], regions: [(String, [String])], edges: [(String, String)],
                     radius: Double, fusion: String, levelKnown: Bool = false, centres: [String: (Double, Double)] = [:],
                     radii: [String: Double] = [:]) throws -> Site {
        var y = "site: test\ngateways:\n"
        for g in gateways { y += "  - { id: \(g.0), position: [\(g.1), \(g.2)] }\n" }
        y += "regions:\n"
        for r in regions {
            let at = centres[r.0].map { ", position: [\($0.0), \($0.1)]" } ?? ""
            y += "  - { id: \(r.0), gateways: [\(r.1.joined(separator: ", "))], radius_m: \(radii[r.0] ?? radius)\(at) }\n"
        }
        y += "edges:\n"
        for e in edges { y += "  - [\(e.0), \(e.1)]\n" }
        y += "tracking:\n  macs: [\"02:00:00:00:00:01\"]\n"
        if !fusion.isEmpty { y += "fusion:\n" + fusion.split(separator: "\n").map { "  \($0)\n" }.joined() }
        if levelKnown { y += "calibration:\n  measured_power_offset_db: 0\n" }
        return try SiteLoader.parse(yaml: y).site
    }
}

/// RSSI at `d` metres under the engine's default model (−59 dBm at 1 m, exponent 2).
func rssi(atDistance d: Double) -> Double { -59 - 20 * log10(max(d, 0.1)) }

/// A deterministic random generator (SplitMix64) with a Gaussian helper.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func gaussian(sigma: Double) -> Double {
        let u1 = max(Double.random(in: 0..<1, using: &self), 1e-12), u2 = Double.random(in: 0..<1, using: &self)
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// Drives one engine with a controllable clock; collects every output.
struct Driver {
    var engine: FusionEngine
    var outputs: [FusionOutput] = []
    /// For each location change emitted by `hear` or `run`, the clock when the engine emitted it
    /// (its `t` is the time the change happened, which a switch back-dates to the lead's start).
    var locationReports: [(region: String?, at: Double)] = []
    var now: Double = 1_000
    let device = DeviceID("mac:02-00-00-00-00-01")!

    init(_ site: Site) { engine = FusionEngine(site: site) }

    var site: Site { engine.site }

    /// One reading of the test device by `gateway` at the current time.
    @discardableResult
    mutating func hear(_ gateway: String, rssi: Double, tx: Double? = nil, device: DeviceID? = nil) -> [FusionOutput] {
        let h = engine.handle(for: device ?? self.device)
        let out = engine.ingest(Observation(device: h, gateway: site.gatewayIndex(gateway)!, time: now, rssi: rssi, tx: tx))
        record(out)
        return out
    }

    /// Advances the clock by `seconds` in `step`s, calling `each` at every step (to hear things)
    /// and firing the engine's timers.
    mutating func run(for seconds: Double, step: Double = 1, _ each: (inout Driver) -> Void = { _ in }) {
        let end = now + seconds
        while now + step <= end + 1e-9 {
            now += step
            each(&self)
            record(engine.advance(to: now))
        }
    }

    mutating func record(_ out: [FusionOutput]) {
        outputs += out
        for case .location(let l) in out { locationReports.append((l.region, now)) }
    }

    /// Keeps every gateway alive without hearing the device.
    mutating func heartbeat() {
        for g in site.gateways.indices { engine.gatewayHeartbeat(g, at: now) }
    }

    var locations: [FusionOutput.LocationChange] {
        outputs.compactMap { if case .location(let l) = $0 { l } else { nil } }
    }
    var lives: [FusionOutput.LiveLocation] {
        outputs.compactMap { if case .live(let l) = $0 { l } else { nil } }
    }
    var visits: [FusionOutput.Visit] {
        outputs.compactMap { if case .visit(let v) = $0 { v } else { nil } }
    }
    var journeys: [FusionOutput.Journey] {
        outputs.compactMap { if case .journey(let j) = $0 { j } else { nil } }
    }
    var monitored: [FusionOutput.MonitoredSet] {
        outputs.compactMap { if case .monitored(let m) = $0 { m } else { nil } }
    }
    var transitions: [FusionOutput.Transition] {
        outputs.compactMap { if case .transition(let t) = $0 { t } else { nil } }
    }
    func states(_ region: String) -> [FusionOutput.StateChange] {
        outputs.compactMap { if case .state(let s) = $0, s.region == region { s } else { nil } }
    }
    var deviceState: DeviceState { engine.devices[Int(engine.existingHandle(for: device)!.index)] }
}
