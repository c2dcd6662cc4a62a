import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkFusion

/// What forgetting idle devices (`fusion.forget_after_s`) buys a venue whose visitors come and go:
/// the fusion benchmark's 200-region grid, a visitor arriving every 7.2 s who walks for 30 min
/// (about 250 present at any time, 500 an hour) and is then never heard again, over 8 h of venue
/// time, run once with the default `forget_after_s` (3600) and once with 0 (never forget). Prints per
/// simulated hour the devices the engine holds, their state's bytes (the engine's accounting) and
/// the engine's time per second of venue time spent in `advance` (timers, the per-second scan).
enum FusionChurnBenchmark {
    static let hours = 8, arrivalEveryS = 7.2, stayS = 1800.0

    static func run() {
        for forget in [3600.0, 0] {
            let site = FusionBenchmark.makeSite(fusion: "forget_after_s: \(Int(forget))")
            print("forget_after_s: \(Int(forget))\(forget == 0 ? " (never forget)" : "")")
            print("  hour  visitors so far  held devices  state MB  advance µs per venue second  sightings/s (with generating them)")
            var engine = FusionEngine(site: site)
            var visitors = Visitors(seed: 11)
            var buffer: [(visitor: Int, gateway: Int, time: Double, rssi: Double)] = []
            var out: [FusionOutput] = []
            out.reserveCapacity(1 << 12)
            var handles: [Int: DeviceHandle] = [:]
            for hour in 0..<hours {
                var advanceTime = Duration.zero, readings = 0
                let hourStart = ContinuousClock.now
                for s in hour * 3600..<(hour + 1) * 3600 {
                    visitors.tick(s, into: &buffer)
                    handles.removeAll(keepingCapacity: true)
                    for r in buffer {
                        let h: DeviceHandle
                        if let known = handles[r.visitor] { h = known } else {
                            h = engine.handle(for: DeviceID.mac(FusionBenchmark.address(r.visitor)))
                            handles[r.visitor] = h
                        }
                        engine.ingest(Observation(device: h, gateway: r.gateway, time: r.time, rssi: r.rssi), into: &out)
                    }
                    readings += buffer.count
                    let t0 = ContinuousClock.now
                    out += engine.advance(to: Double(s + 1))
                    advanceTime += ContinuousClock.now - t0
                    out.removeAll(keepingCapacity: true)
                }
                let wall = (ContinuousClock.now - hourStart).seconds
                let stats = engine.memoryStatistics()
                print(String(format: "  %4d  %15d  %12d  %8.1f  %27.1f  %11.0f", hour + 1, visitors.arrived, engine.deviceCount,
                             stats.meanBytes * Double(engine.deviceCount) / 1e6, advanceTime.seconds / 3600 * 1e6,
                             Double(readings) / wall))
            }
            print("  forgotten: \(engine.forgottenDevices); counters: \(engine.counters)")
        }
    }

    /// Visitors arriving every `arrivalEveryS`, each walking 1 m/s between random points for `stayS`,
    /// heard once a second by every gateway within 15 m (σ = 4 dB).
    struct Visitors {
        var rng: SplitMix
        var active: [(id: Int, arrived: Double, x: Double, y: Double, tx: Double, ty: Double)] = []
        var arrived = 0

        init(seed: UInt64) { rng = SplitMix(seed: seed) }

        mutating func point() -> (Double, Double) {
            (Double(rng.below(FusionBenchmark.cols * 10)), Double(rng.below(FusionBenchmark.rows * 10)))
        }

        mutating func tick(_ s: Int, into out: inout [(visitor: Int, gateway: Int, time: Double, rssi: Double)]) {
            out.removeAll(keepingCapacity: true)
            while Double(arrived) * arrivalEveryS <= Double(s) {
                let (x, y) = point()
                active.append((arrived, Double(s), x, y, x, y))
                arrived += 1
            }
            active.removeAll { Double(s) - $0.arrived >= stayS }
            for i in active.indices {
                var v = active[i]
                let dx = v.tx - v.x, dy = v.ty - v.y, len = (dx * dx + dy * dy).squareRoot()
                if len < 1 { (v.tx, v.ty) = point() } else { v.x += dx / len; v.y += dy / len }
                active[i] = v
                let t = Double(s) + Double(i % 1000) / 1000
                FusionBenchmark.hear(x: v.x, y: v.y, &rng) { g, rssi in out.append((v.id, g, t, rssi)) }
            }
        }
    }
}
