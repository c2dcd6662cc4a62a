import Foundation
import WaymarkCore
import WaymarkFusion

/// `waymark replay --batches`: the engine fed exactly as `waymark-aggregator` feeds it — edge
/// batches (one `SightingBatch` per line, as `waymark simulate --batches` writes them or as the
/// gateways publish them) released in window order, each entry one reading of the window's mean
/// RSSI weighted by its advert count, an empty batch a heartbeat of its gateway. Scoring this
/// output shows the accuracy of the production path, which sees one aggregate per device, gateway
/// and window rather than every advert.
struct BatchReplay {
    struct Summary { var batches = 0, entries = 0, duplicates = 0, badLines = 0, lateLines = 0, unknownGateways = 0 }

    private var engine: FusionEngine
    private let reorderWindow: Double
    private let includeTransitions: Bool
    private let writer: OutputWriter
    private let inputName: String
    private let encoder = JSONEncoder()
    private var pending = Replay.Heap<SightingBatch>()
    private var seen = Set<String>()
    private var newest = -Double.infinity
    private var released = -Double.infinity
    private var nextTick = -Double.infinity
    private var out: [FusionOutput] = []
    private var handles: [DeviceID: DeviceHandle] = [:]
    private var reportedGateways = Set<String>()
    private(set) var outputs: [String: Int] = [:]
    var summary = Summary()

    init(site: Site, inputName: String, reorderWindow: Double, includeTransitions: Bool, writer: OutputWriter) {
        engine = FusionEngine(site: site)
        self.inputName = inputName
        self.reorderWindow = reorderWindow
        self.includeTransitions = includeTransitions
        self.writer = writer
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// One input line: a batch, or an error reported with the line number.
    mutating func accept(line: ArraySlice<UInt8>, number: Int) {
        let batch: SightingBatch
        do { batch = try JSONDecoder().decode(SightingBatch.self, from: Data(line)) } catch {
            summary.badLines += 1
            printError("\(inputName):\(number): not an edge batch ({\"v\":1,\"gateway\",\"boot\",\"seq\",\"start\",\"end\",\"sightings\":[…]}): \(Self.reason(error)); line skipped")
            return
        }
        // The aggregator drops a batch it has already seen by (gateway, boot, seq).
        guard seen.insert("\(batch.gateway)\u{0}\(batch.boot)\u{0}\(batch.seq)").inserted else { summary.duplicates += 1; return }
        if batch.end < released {
            summary.lateLines += 1
            printError("\(inputName):\(number): the batch ending at \(batch.end) is \(released - batch.end) s behind batches already processed (more disorder than --reorder-window \(reorderWindow) s); skipped")
            return
        }
        pending.push(.init(time: batch.end, line: number, input: batch))
        newest = max(newest, batch.end)
        while let top = pending.peekTime, top <= newest - reorderWindow { process(pending.pop()!.input) }
        flushOutputs()
    }

    mutating func finish() {
        while let item = pending.pop() { process(item.input) }
        if newest.isFinite { out += engine.finish(at: newest) }
        flushOutputs()
    }

    func summaryText() -> String {
        let c = engine.counters
        let written = outputs.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        return """
        \(inputName): \(summary.batches) batches with \(summary.entries) entries, \(summary.duplicates) duplicates dropped, \
        \(summary.badLines) bad lines, \(summary.lateLines) late batches, \(summary.unknownGateways) batches of unknown gateways; \
        engine: \(c.accepted) accepted, \(c.outliers) outliers, \(c.implausibleRSSI) implausible RSSI, \
        \(c.implausibleTxPower) implausible tx power; \(engine.deviceCount) devices; wrote \(written.isEmpty ? "nothing" : written)
        """
    }

    private mutating func process(_ batch: SightingBatch) {
        released = batch.end
        guard let g = engine.site.gatewayIndex(batch.gateway) else {
            summary.unknownGateways += 1
            if reportedGateways.insert(batch.gateway).inserted {
                printError("\(inputName): gateway '\(batch.gateway)' is not in the site file; its batches are skipped (reported once)")
            }
            return
        }
        summary.batches += 1
        for entry in batch.sightings {
            tick(to: entry.last)
            let handle = handles[entry.device] ?? {
                let h = engine.handle(for: entry.device)
                handles[entry.device] = h
                return h
            }()
            engine.ingest(entry, device: handle, gateway: g, into: &out)
            summary.entries += 1
        }
        if batch.sightings.isEmpty {
            engine.gatewayHeartbeat(g, at: batch.end)
            tick(to: batch.end)
        }
    }

    private mutating func tick(to t: Double) {
        if t >= nextTick {
            out += engine.advance(to: t)
            nextTick = t.rounded(.down) + 1
        }
    }

    private mutating func flushOutputs() {
        for o in out where includeTransitions || o.type != "transition" {
            outputs[o.type, default: 0] += 1
            if let line = try? encoder.encode(o) { writer.write(line) }
        }
        out.removeAll(keepingCapacity: true)
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c), DecodingError.dataCorrupted(let c):
            c.codingPath.isEmpty ? c.debugDescription
                : "'\(c.codingPath.map(\.stringValue).joined(separator: "."))': \(c.debugDescription)"
        default: "\(error)"
        }
    }
}
