import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// `FusionWorkers` (issue 18: every core in one aggregator): devices split among engines by a
/// fixed hash of their id, a batch's parts fused in parallel, results that depend only on the
/// input and the number of workers.
@Suite("Fusion workers")
struct FusionWorkersTests {
    /// `devices` walking a 4 × 3 grid for `seconds`; every gateway sends one batch a second with
    /// an entry per device within 25 m (the second half of the devices starts 60 s later).
    static func batches(seconds: Int, devices: Int = 40) -> [SightingBatch] {
        var random = SeededRandom(seed: 18)
        let ids = (0..<devices).map { DeviceID(String(format: "mac:02-00-00-00-%02x-%02x", $0 / 256, $0 % 256))! }
        var out: [SightingBatch] = []
        var seq: [Int: UInt64] = [:]
        for s in 0..<seconds {
            for gy in 0..<3 {
                for gx in 0..<4 {
                    let g = gy * 4 + gx
                    var entries: [SightingBatch.Entry] = []
                    for (d, id) in ids.enumerated() where d < devices / 2 || s >= 60 {
                        // Each device walks the grid's perimeter at 0.5 m/s from its own start.
                        let along = (Double(s) * 0.5 + Double(d) * 7).truncatingRemainder(dividingBy: 100)
                        let (x, y) = along < 30 ? (along, 0.0) : along < 50 ? (30, along - 30) : along < 80 ? (80 - along, 20) : (0, 100 - along)
                        let distance = ((x - Double(gx) * 10) * (x - Double(gx) * 10) + (y - Double(gy) * 10) * (y - Double(gy) * 10)).squareRoot()
                        guard distance < 25 else { continue }
                        let r = (rssi(atDistance: max(distance, 0.5)) + random.gaussian(sigma: 3)).rounded()
                        let t = Double(s) + 0.1 + Double(d) * 0.02
                        entries.append(.init(device: id, count: 4, rssiMax: r + 2, rssiMean: r, rssiLast: r, tx: -59, first: t - 0.05, last: t))
                    }
                    seq[g, default: 0] += 1
                    out.append(SightingBatch(gateway: "g\(gx)_\(gy)", boot: "b", seq: seq[g]!, start: Double(s), end: Double(s) + 1,
                                             sightings: entries))
                }
            }
        }
        return out
    }

    static func site() throws -> Site { try Venue.grid(cols: 4, rows: 3) }

    static func run(_ workers: inout FusionWorkers, _ batches: some Sequence<SightingBatch>) -> [FusionOutput] {
        var out: [FusionOutput] = []
        var handles: [DeviceHandle] = []
        for b in batches { workers.feed(b, gateway: workers.site.gatewayIndex(b.gateway)!, into: &out, handles: &handles) }
        return out
    }

    @Test("the worker of a device is a fixed function of its id: FNV-1a 64 modulo the count")
    func workerAssignmentIsFixed() {
        // Values computed independently (Python) from the FNV-1a definition.
        let a = DeviceID("mac:02-00-00-00-00-0a")!
        let beacon = DeviceID("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:2")!
        #expect([2, 3, 8].map { FusionWorkers.worker(of: a, count: $0) } == [0, 1, 0])
        #expect([2, 3, 8].map { FusionWorkers.worker(of: beacon, count: $0) } == [0, 2, 6])
        #expect(FusionWorkers.worker(of: a, count: 1) == 0)
        // Spread: 2,000 ids over 4 workers, each within 10 % of a quarter.
        var counts = [0, 0, 0, 0]
        for i in 0..<2000 { counts[FusionWorkers.worker(of: DeviceID(String(format: "mac:02-00-00-00-%02x-%02x", i / 256, i % 256))!, count: 4)] += 1 }
        #expect(counts.allSatisfy { abs($0 - 500) < 50 }, "\(counts)")
    }

    @Test("one worker is exactly the single engine fed through EngineFeed")
    func oneWorkerIsTheEngine() throws {
        let site = try Self.site()
        let batches = Self.batches(seconds: 150)
        var workers = FusionWorkers(site: site, count: 1)
        let viaWorkers = Self.run(&workers, batches)
        var engine = FusionEngine(site: site)
        var feed = EngineFeed()
        var direct: [FusionOutput] = []
        var handles: [DeviceHandle] = []
        for b in batches { feed.feed(b, gateway: site.gatewayIndex(b.gateway)!, &engine, into: &direct, handles: &handles) }
        #expect(viaWorkers.count > 500)
        #expect(viaWorkers == direct)
        #expect(workers.calibration == engine.calibration)
    }

    @Test("each worker is an engine fed its own devices' entries, and a batch without them as a heartbeat")
    func workersAreEnginesOfTheirDevices() throws {
        let site = try Self.site()
        let batches = Self.batches(seconds: 150, devices: 160)
        #expect(batches.contains { $0.sightings.count >= FusionWorkers.parallelEntries }, "some batches must take the parallel path")
        var workers = FusionWorkers(site: site, count: 3)
        let together = Self.run(&workers, batches)
        var expected: [FusionOutput] = []
        for w in 0..<3 {
            var engine = FusionEngine(site: site)
            var feed = EngineFeed()
            var out: [FusionOutput] = []
            var handles: [DeviceHandle] = []
            for b in batches {
                var part = b
                part.sightings = b.sightings.filter { FusionWorkers.worker(of: $0.device, count: 3) == w }
                feed.feed(part, gateway: site.gatewayIndex(b.gateway)!, &engine, into: &out, handles: &handles)
            }
            #expect(engine.calibration == workers.engine(w).calibration)
            expected += out
        }
        // Per device, the same outputs in the same order (across devices the order interleaves by batch).
        func byDevice(_ o: [FusionOutput]) -> [DeviceID: [FusionOutput]] { Dictionary(grouping: o, by: \.device) }
        #expect(together.count == expected.count && together.count > 500)
        #expect(byDevice(together) == byDevice(expected))
        // The same input again: the same output, in the same order.
        var again = FusionWorkers(site: site, count: 3)
        #expect(Self.run(&again, batches) == together)
    }

    @Test("global handles name each entry's device in its worker")
    func handlesAreGlobal() throws {
        let site = try Self.site()
        var workers = FusionWorkers(site: site, count: 2)
        var out: [FusionOutput] = []
        var handles: [DeviceHandle] = []
        var seen: [DeviceHandle: DeviceID] = [:]
        for b in Self.batches(seconds: 80) {
            workers.feed(b, gateway: site.gatewayIndex(b.gateway)!, into: &out, handles: &handles)
            #expect(handles.count == b.sightings.count)
            for (entry, h) in zip(b.sightings, handles) {
                #expect(Int(h.index) % 2 == FusionWorkers.worker(of: entry.device, count: 2))
                #expect(workers.existingHandle(for: entry.device) == h)
                #expect(seen.updateValue(entry.device, forKey: h).map { $0 == entry.device } ?? true, "one handle, one device")
            }
        }
        #expect(seen.count == 40 && workers.deviceCount == 40)
        // The site's tables are built once and shared.
        #expect(workers.engine(0).ctx === workers.engine(1).ctx)
    }

    @Test("a restart from the checkpoint goes on exactly as the uninterrupted run; another count restores every device")
    func checkpointRestores() throws {
        let site = try Self.site()
        let batches = Self.batches(seconds: 200)
        let cut = batches.count / 2
        var straight = FusionWorkers(site: site, count: 2)
        _ = Self.run(&straight, batches[..<cut])
        let devices = try JSONEncoder().encode(straight.checkpoint())
        let state = try JSONEncoder().encode(straight.workerCheckpoints())
        let rest = Self.run(&straight, batches[cut...])

        var restored = FusionWorkers(site: site, count: 2)
        let saved = try JSONDecoder().decode([DeviceCheckpoint].self, from: devices).sorted { $0.ordinal < $1.ordinal }
        for cp in saved { restored.restore(cp) }
        let savedWorkers = try JSONDecoder().decode([FusionWorkerCheckpoint].self, from: state)
        restored.restore(workers: savedWorkers)
        #expect(restored.nextTick == savedWorkers.map(\.nextTick).min())
        let atRestart = restored
        let resumed = Self.run(&restored, batches[cut...])
        #expect(rest.count > 100)
        #expect(resumed == rest)

        var three = FusionWorkers(site: site, count: 3)
        for cp in saved { three.restore(cp) }
        three.restore(workers: try JSONDecoder().decode([FusionWorkerCheckpoint].self, from: state))
        #expect(three.deviceCount == saved.count)
        for cp in saved { #expect(Int(three.existingHandle(for: cp.device)!.index) % 3 == FusionWorkers.worker(of: cp.device, count: 3)) }
        // Worker 2 of three starts from the saved worker 0's calibration (2 modulo 2), 1 from 1's.
        #expect(three.engine(2).calibration == atRestart.engine(0).calibration)
        #expect(three.engine(1).calibration == atRestart.engine(1).calibration)
        #expect(atRestart.engine(0).calibration != atRestart.engine(1).calibration)
    }

    @Test("the pooled calibration weighs each worker's estimates by the evidence behind them")
    func pooledCalibration() throws {
        let site = try Self.site()
        var workers = FusionWorkers(site: site, count: 2)
        _ = Self.run(&workers, Self.batches(seconds: 150))
        let a = workers.engine(0).calibration, b = workers.engine(1).calibration
        #expect(a.updates > 0 && b.updates > 0)
        let pooled = workers.calibration
        #expect(pooled.updates == a.updates + b.updates)
        let power = (a.powerCorrectionDB * a.updates + b.powerCorrectionDB * b.updates) / (a.updates + b.updates)
        #expect(abs(pooled.powerCorrectionDB - power) < 1e-9)
        #expect(pooled.powerCorrectionDB >= min(a.powerCorrectionDB, b.powerCorrectionDB)
                && pooled.powerCorrectionDB <= max(a.powerCorrectionDB, b.powerCorrectionDB))
        #expect(pooled.receptionOpportunities == a.receptionOpportunities + b.receptionOpportunities)
        #expect(workers.counters.accepted == workers.engine(0).counters.accepted + workers.engine(1).counters.accepted)
    }
}
