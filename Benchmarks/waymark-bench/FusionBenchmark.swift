import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkFusion

/// Fusion engine throughput and memory: 10,000 devices walking a 200-region grid venue (20 × 10
/// regions, 10 m apart), each heard by every gateway within 15 m once per second with σ = 4 dB
/// noise. Readings are generated up front; only `ingest` and the once-per-second `advance` are
/// timed, on one thread.
enum FusionBenchmark {
    static let cols = 20, rows = 10, devices = 10_000, seconds = 60

    static func run() {
        let site = makeSite()
        print("venue: \(site.regions.count) regions, \(site.gateways.count) gateways; \(devices) devices, \(seconds) s")
        // Memory first, before anything large is allocated and freed: resident set growth while
        // 10,000 devices are registered and fed 10 s of readings (generated into one reused buffer).
        // The readings' buffer and the outputs' are the caller's, not the engine's: both are
        // filled once before the first measurement, so that their pages do not count as growth.
        var buffer = [Observation](repeating: Observation(device: DeviceHandle(index: 0), gateway: 0, time: 0, rssi: -60),
                                   count: devices * 12)
        buffer.removeAll(keepingCapacity: true)
        var scratch = [FusionOutput](repeating: .location(.init(t: 0, device: DeviceID.mac(address(0)), region: nil)), count: 1 << 16)
        scratch.removeAll(keepingCapacity: true)
        var walkers = Walkers(seed: 7)
        let rssBefore = residentBytes()
        var sized = FusionEngine(site: site)
        for i in 0..<devices { _ = sized.handle(for: DeviceID.mac(address(i))) }
        for s in 0..<10 {
            walkers.tick(s, into: &buffer)
            for o in buffer { sized.ingest(o, into: &scratch) }
            scratch += sized.advance(to: Double(s + 1))
            scratch.removeAll(keepingCapacity: true)
        }
        let rssAfter = residentBytes()
        let stats = sized.memoryStatistics()
        withExtendedLifetime(sized) {}

        walkers = Walkers(seed: 7)
        var ticks: [[Observation]] = []
        for s in 0..<seconds {
            walkers.tick(s, into: &buffer)
            ticks.append(buffer)
        }
        let total = ticks.reduce(0) { $0 + $1.count }
        print("readings: \(total) (\(total / seconds) per second of venue time)")

        var engine = FusionEngine(site: site)
        for i in 0..<devices { _ = engine.handle(for: DeviceID.mac(address(i))) }
        var out: [FusionOutput] = []
        out.reserveCapacity(1 << 16)
        var outputs = 0
        let start = ContinuousClock.now
        for (s, tick) in ticks.enumerated() {
            for o in tick { engine.ingest(o, into: &out) }
            out += engine.advance(to: Double(s + 1))
            outputs += out.count
            out.removeAll(keepingCapacity: true)
        }
        let secs = (ContinuousClock.now - start).seconds
        print(String(format: "throughput: %.0f sightings/s (%d sightings in %.3f s, one thread), %d outputs",
                     Double(total) / secs, total, secs, outputs))
        print(String(format: "memory per device (MemoryLayout accounting of device state, arrays by capacity, + index entry): %.0f bytes (max %d, mean set %.1f regions)",
                     stats.meanBytes, stats.maxBytes, stats.meanSlots))
        print(String(format: "memory per device (resident set growth / devices while 10 s of readings fill a fresh engine; includes allocator overhead and the engine's site tables): %.0f bytes",
                     Double(rssAfter - rssBefore) / Double(devices)))
        print("counters: \(engine.counters)")
    }

    /// The grid venue; `fusion` lines go into its `fusion:` section.
    static func makeSite(fusion: String = "") -> Site {
        var y = "site: bench\ngateways:\n"
        for j in 0..<rows { for i in 0..<cols { y += "  - { id: g\(i)-\(j), position: [\(i * 10), \(j * 10)] }\n" } }
        y += "regions:\n"
        for j in 0..<rows { for i in 0..<cols { y += "  - { id: r\(i)-\(j), gateways: [g\(i)-\(j)], radius_m: 4 }\n" } }
        y += "edges:\n"
        for j in 0..<rows {
            for i in 0..<cols {
                if i > 0 { y += "  - [r\(i - 1)-\(j), r\(i)-\(j)]\n" }
                if j > 0 { y += "  - [r\(i)-\(j - 1), r\(i)-\(j)]\n" }
            }
        }
        y += "tracking:\n  macs: [\"02:00:00:00:00:01\"]\n"
        if !fusion.isEmpty { y += "fusion:\n  \(fusion)\n" }
        return try! SiteLoader.parse(yaml: y).site
    }

    static func address(_ i: Int) -> [UInt8] { [0x02, 0, 0, UInt8(i >> 16 & 0xFF), UInt8(i >> 8 & 0xFF), UInt8(i & 0xFF)] }

    /// Devices walking 1 m/s towards random targets; each second every gateway within 15 m hears
    /// each device once.
    struct Walkers {
        var rng: SplitMix
        var pos: [(Double, Double)]
        var target: [(Double, Double)]

        init(seed: UInt64) {
            var rng = SplitMix(seed: seed)
            pos = (0..<devices).map { _ in (Double(rng.below(cols * 10)), Double(rng.below(rows * 10))) }
            target = pos
            self.rng = rng
        }

        mutating func tick(_ s: Int, into tick: inout [Observation]) {
            tick.removeAll(keepingCapacity: true)
            for d in 0..<devices {
                var (x, y) = pos[d]
                let (tx, ty) = target[d]
                let dx = tx - x, dy = ty - y, len = (dx * dx + dy * dy).squareRoot()
                if len < 1 { target[d] = (Double(rng.below(cols * 10)), Double(rng.below(rows * 10))) } else { x += dx / len; y += dy / len }
                pos[d] = (x, y)
                let t = Double(s) + Double(d) / Double(devices)
                hear(x: x, y: y, &rng) { g, rssi in
                    tick.append(Observation(device: DeviceHandle(index: Int32(d)), gateway: g, time: t, rssi: rssi))
                }
            }
        }
    }

    /// Every gateway within 15 m of (x, y) hears the device once: `heard(gateway, rssi)` with
    /// path-loss exponent 2.5 and σ = 4 dB.
    static func hear(x: Double, y: Double, _ rng: inout SplitMix, _ heard: (Int, Double) -> Void) {
        let cx = Int((x / 10).rounded()), cy = Int((y / 10).rounded())
        for gy in max(0, cy - 1)...min(rows - 1, cy + 1) {
            for gx in max(0, cx - 1)...min(cols - 1, cx + 1) {
                let ddx = x - Double(gx * 10), ddy = y - Double(gy * 10)
                let dist = max(0.5, (ddx * ddx + ddy * ddy).squareRoot())
                guard dist <= 15 else { continue }
                heard(gy * cols + gx, min(-1, -59 - 25 * log10(dist) + rng.gaussian() * 4))
            }
        }
    }

    /// Resident set size from /proc/self/statm (Linux); 0 elsewhere.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func gaussian() -> Double {
        let u1 = max(unit(), 1e-12), u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
