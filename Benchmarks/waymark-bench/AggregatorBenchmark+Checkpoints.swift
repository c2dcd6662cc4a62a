import Foundation
import WaymarkAggregator
import WaymarkCore
import WaymarkFusion

extension AggregatorBenchmark {
    /// The cost of one write's device checkpoints in the stored encoding against JSON (what was
    /// stored before schema 0005): the engine's state after the first `windows` windows of the
    /// benchmark's batches, fused in process, encoded a few times over.
    static func checkpointCost(site: Site, payloads: [(gateway: String, payload: [UInt8])], windows: Int = 60) {
        let settings = AggregatorCore.Settings(clock: .recorded)
        let topics = Topics(site: site.id)
        var core = AggregatorCore(site: site, topics: topics, settings: settings)
        for p in payloads.prefix(windows * gateways) {
            _ = core.handle(topic: topics.sightings(p.gateway), payload: p.payload, receivedAt: Date().timeIntervalSince1970)
        }
        let checkpoints = core.fusion.checkpoint()
        guard !checkpoints.isEmpty else { return }
        let rounds = 5
        func measure(_ encode: (DeviceCheckpoint) throws -> Int) rethrows -> (microseconds: Double, bytes: Int) {
            var bytes = 0
            let started = ContinuousClock.now
            for _ in 0..<rounds { bytes = 0; for cp in checkpoints { bytes += try encode(cp) } }
            let seconds = (ContinuousClock.now - started).seconds
            return (seconds * 1e6 / Double(rounds * checkpoints.count), bytes / checkpoints.count)
        }
        do {
            let binaryEncoder = CompactBinaryEncoder(), jsonEncoder = JSONEncoder()
            var buffer: [UInt8] = []
            let binary = try measure { cp in buffer.removeAll(keepingCapacity: true); try binaryEncoder.encode(cp, appendingTo: &buffer); return buffer.count }
            let json = try measure { try jsonEncoder.encode($0).count }
            let decoder = CompactBinaryDecoder()
            let encoded = try checkpoints.map { try binaryEncoder.encode($0) }
            var i = 0
            let decode = try measure { _ in
                defer { i = (i + 1) % encoded.count }
                return try decoder.decode(DeviceCheckpoint.self, from: encoded[i]).device.rawValue.utf8.count
            }
            print(String(format: "aggregator: device checkpoint (%d devices): binary %.1f µs and %d bytes each (decode %.1f µs), JSON %.1f µs and %d bytes",
                         checkpoints.count, binary.microseconds, binary.bytes, decode.microseconds, json.microseconds, json.bytes))
        } catch {
            print("aggregator: checkpoint encoding failed: \(error)")
        }
    }
}
