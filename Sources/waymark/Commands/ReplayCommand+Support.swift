import Foundation
import HeapModule
import WaymarkCore
import WaymarkFusion
import WaymarkNotify
import WaymarkSimulation

/// The replay loop: a reorder buffer in front of the engine, the 1-second timer tick, and output.
///
/// It reads either sightings (and gateway status lines), one reading per advert, or edge batches
/// (`--batches`), fed exactly as waymark-aggregator feeds them: window order, duplicates dropped by
/// (gateway, boot, seq), each entry one reading of the window's mean RSSI weighted by its count,
/// an empty batch a heartbeat of its gateway.
struct Replay {
    struct Summary {
        var sightings = 0, statusLines = 0, badLines = 0, lateLines = 0, unknownGateways = 0
        var batches = 0, entries = 0, duplicates = 0
        var outputs: [String: Int] = [:]
    }

    /// One input line waiting in the reorder buffer.
    enum Pending {
        case line(ReplayInput)
        case batch(SightingBatch)
    }

    /// The fusion engines (one unless `--workers`), as the aggregator runs them.
    private var engine: FusionWorkers
    /// The site's notification rules, evaluated exactly as the aggregator evaluates them.
    private var notifier: Notifier
    private var notes: [RuleNotification] = []
    /// Outputs and notifications in the order they happened, waiting to be written.
    private var lines: [Line] = []
    /// Seconds of input disorder the buffer repairs; infinite: the whole input is read, then fused
    /// in time order (`--sort`, and `waymark site calibrate`, whose walk recordings may hold one
    /// gateway's batches after another's).
    private let reorderWindow: Double
    private let includeTransitions: Bool
    private let writer: OutputWriter
    private let inputName: String
    private let encoder = JSONEncoder()
    /// Pending lines, kept sorted by (time, gateway, line number) within the reorder window.
    private var pending = Heap<Pending>()
    private var seenBatches = Set<String>()
    private var newest = -Double.infinity
    private var released = -Double.infinity
    private var handles: [DeviceHandle] = []
    private var out: [FusionOutput] = []
    private var unknownGatewaysReported = Set<String>()
    var summary = Summary()
    /// When not nil, every live-region output is kept here too (`waymark site calibrate --truth`
    /// compares them with the walk test's stays).
    var liveLocations: [FusionOutput.LiveLocation]?
    /// What the engine learned about the venue's radio so far.
    var calibration: VenueCalibration { engine.calibration }

    /// `teacher`: where devices truly were, for `waymark site calibrate --truth`.
    init(site: Site, inputName: String, reorderWindow: Double, includeTransitions: Bool, writer: OutputWriter, workers: Int = 1,
         teacher: CalibrationTeacher? = nil) {
        self.inputName = inputName
        engine = FusionWorkers(site: site, count: workers, teacher: teacher)
        notifier = Notifier(site: site)
        self.reorderWindow = reorderWindow
        self.includeTransitions = includeTransitions
        self.writer = writer
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// Reads every line of `reader`: sightings and status lines, or edge batches with `batches`.
    /// A line that does not parse is counted and reported on stderr with its number, and skipped.
    mutating func read(_ reader: LineReader, batches: Bool) {
        let decoder = JSONDecoder()
        while let (number, line) = reader.next() {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            do {
                if batches {
                    accept(batch: try decoder.decode(SightingBatch.self, from: Data(line)), line: number)
                } else {
                    accept(try ReplayInput.parse(jsonLine: String(decoding: line, as: UTF8.self)), line: number)
                }
            } catch {
                summary.badLines += 1
                reportSkipped("\(inputName):\(number): \(ReplayCommand.describe(error)); line skipped")
            }
        }
    }

    /// How far out of time order `reader`'s lines are: the most any line's time (a batch's window
    /// end) lies behind the newest time before it, 0 for a file in order. Lines that do not parse
    /// are passed over (the replay itself reports them).
    static func disorder(of reader: LineReader, batches: Bool) -> Double {
        struct WindowEnd: Decodable { var end: Double }
        let decoder = JSONDecoder()
        var newest = -Double.infinity, most = 0.0
        while let (_, line) = reader.next() {
            let time: Double
            if batches {
                guard let end = try? decoder.decode(WindowEnd.self, from: Data(line)).end else { continue }
                time = end
            } else {
                guard let t = line.withUnsafeBufferPointer({ ReplayInput.time(jsonLine: $0) }) else { continue }
                time = t
            }
            most = max(most, newest - time)
            newest = max(newest, time)
        }
        return most
    }

    /// Reports a skipped line on stderr, the first `shownSkips` of them: a file written wrongly
    /// throughout (times in milliseconds, another format) would otherwise print one message per
    /// line. The summary counts them all.
    private mutating func reportSkipped(_ message: String) {
        skipsShown += 1
        if skipsShown <= Self.shownSkips {
            printError(message)
        } else if skipsShown == Self.shownSkips + 1 {
            printError("\(inputName): more lines are skipped; only the first \(Self.shownSkips) are shown, the summary counts them all")
        }
    }

    private var skipsShown = 0
    static let shownSkips = 20

    /// A sighting or gateway status line.
    mutating func accept(_ input: ReplayInput, line: Int) {
        enqueue(.line(input), at: input.time, rank: engine.site.gatewayIndex(input.gateway) ?? Self.unknownGateway, line: line)
    }

    /// An edge batch, ordered by the end of its window; one already seen is dropped.
    mutating func accept(batch: SightingBatch, line: Int) {
        guard seenBatches.insert("\(batch.gateway)\u{0}\(batch.boot)\u{0}\(batch.seq)").inserted else {
            summary.duplicates += 1
            return
        }
        enqueue(.batch(batch), at: batch.end, rank: engine.site.gatewayIndex(batch.gateway) ?? Self.unknownGateway, line: line)
    }

    /// The rank of a line whose gateway the site does not have (after every known one).
    static let unknownGateway = Int.max

    /// Lines of one time go to the engine in the site's gateway order (`rank`: the gateway's
    /// index, resolved once here and used again when the line is processed), then in file
    /// order: which gateway's reading of a moment a file lists first is an accident (gateways
    /// racing over MQTT, a recording's column order), and the engine's re-acquisition candidate
    /// follows the order readings come in. The aggregator's reorder stage releases equal window
    /// ends in the same order (`ReorderBuffer`). `tools/robustness/shuffle.py` checks it.
    private mutating func enqueue(_ input: Pending, at time: Double, rank: Int, line: Int) {
        if time < released {
            summary.lateLines += 1
            reportSkipped("\(inputName):\(line): t=\(time) is \(released - time) s earlier than input already processed (more disorder than --reorder-window \(reorderWindow) s); line skipped — run with --sort to read the whole input and fuse it in time order")
            return
        }
        pending.push(.init(time: time, rank: rank, line: line, input: input))
        newest = max(newest, time)
        while let top = pending.peekTime, top <= newest - reorderWindow { process(pending.pop()!) }
        try? flushOutputs()
    }

    private mutating func process(_ item: Heap<Pending>.Item) {
        released = item.time
        switch item.input {
        case .line(.sighting(let s)):
            tick(to: item.time)
            guard let g = gatewayIndex(item, s.gateway) else { return }
            summary.sightings += 1
            engine.ingest(device: s.device, gateway: g, time: s.time, rssi: s.rssi, tx: s.tx, into: &out)
        case .line(.gatewayStatus(let gateway, let online, let t)):
            tick(to: item.time)
            guard let g = gatewayIndex(item, gateway) else { return }
            summary.statusLines += 1
            out += engine.gatewayStatus(g, online: online, at: t)
        case .batch(let batch):
            guard let g = gatewayIndex(item, batch.gateway) else { return }
            summary.batches += 1
            summary.entries += batch.sightings.count
            engine.feed(batch, gateway: g, into: &out, handles: &handles)
        }
        route()
        // After each engine call, as the aggregator does after each batch.
        if case let next = engine.nextTick, next.isFinite { notifier.advance(to: next - 1, into: &notes) }
        takeNotes()
    }

    /// One line of output.
    enum Line {
        case output(FusionOutput)
        case notification(RuleNotification)
    }

    /// Moves the engine's outputs to the output lines, each followed by the notifications it caused.
    private mutating func route() {
        for o in out {
            lines.append(.output(o))
            notifier.observe(o, into: &notes)
            takeNotes()
        }
        out.removeAll(keepingCapacity: true)
    }

    private mutating func takeNotes() {
        for n in notes { lines.append(.notification(n)) }
        notes.removeAll(keepingCapacity: true)
    }

    /// Fires the engine's timers at each new second of evidence time.
    private mutating func tick(to t: Double) {
        engine.tick(to: t, into: &out)
    }

    /// The site's index of the line's gateway (its rank); an unknown one is counted and reported
    /// once.
    private mutating func gatewayIndex(_ item: Heap<Pending>.Item, _ gateway: String) -> Int? {
        if item.rank != Self.unknownGateway { return item.rank }
        let line = item.line
        summary.unknownGateways += 1
        if unknownGatewaysReported.insert(gateway).inserted {
            printError("\(inputName):\(line): gateway '\(gateway)' is not in the site file; its lines are skipped (reported once)")
        }
        return nil
    }

    private mutating func flushOutputs() throws {
        route()
        for line in lines {
            switch line {
            case .output(let o):
                guard includeTransitions || o.type != "transition" else { continue }
                if case .live(let l) = o { liveLocations?.append(l) }
                summary.outputs[o.type, default: 0] += 1
                writer.write(try encoder.encode(o))
            case .notification(let n):
                summary.outputs["notification", default: 0] += 1
                writer.write(Data(n.json))
            }
        }
        lines.removeAll(keepingCapacity: true)
    }

    mutating func finish() throws {
        while let item = pending.pop() { process(item) }
        if newest.isFinite {
            out += engine.finish(at: newest)
            route()
            // The input ends: dwells reached and goodbyes due by its last evidence are sent.
            notifier.finish(at: newest, into: &notes)
            takeNotes()
        }
        try flushOutputs()
    }

    /// Notifications sent and held back per rule, for the summary (nil when the site has no rules).
    var notificationSummary: String? {
        guard notifier.isActive else { return nil }
        let c = notifier.counters
        let perRule = c.rules.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.sent)" }.joined(separator: ", ")
        return "notifications: \(c.sent) sent (\(perRule)); held back \(c.suppressed(.cooldown)) by cool-downs, "
            + "\(c.suppressed(.quietHours)) by quiet hours"
    }

    func summaryText(input: String, batches: Bool) -> String {
        let c = engine.counters
        let outputs = summary.outputs.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let read = batches
            ? "\(summary.batches) batches with \(summary.entries) entries, \(summary.duplicates) duplicates dropped, \(summary.badLines) bad lines, "
                + "\(summary.lateLines) late batches, \(summary.unknownGateways) lines of unknown gateways"
            : "\(summary.sightings) sightings, \(summary.statusLines) status lines, \(summary.badLines) bad lines, "
                + "\(summary.lateLines) late lines, \(summary.unknownGateways) lines of unknown gateways"
        let cal = engine.calibration
        let offsets = zip(engine.site.gateways, cal.gatewayOffsetDB).filter { abs($0.1) > VenueCalibration.offsetDeadZoneDB }
            .map { "\($0.0.id) \(String(format: "%+.1f", $0.1))" }
        let reliability = cal.reliabilitySpread.map { r in
            "; gateway reliability median \(Int((r.median * 100).rounded())) %, lowest \(engine.site.gateways[r.lowest.gateway].id) "
                + "\(Int((r.lowest.reliability * 100).rounded())) %"
        } ?? ""
        return """
        \(input): \(read); \
        engine: \(c.accepted) accepted, \(c.outliers) outliers, \(c.implausibleRSSI) implausible RSSI, \
        \(c.implausibleTxPower) implausible tx power; \(engine.deviceCount) devices held at the end\(engine.forgottenDevices > 0 ? ", \(engine.forgottenDevices) forgotten when idle" : ""); wrote \(outputs.isEmpty ? "nothing" : outputs); \
        calibration: measured power \(String(format: "%+.1f", cal.powerCorrectionDB)) dB, path-loss exponent \
        \(String(format: "%.2f", cal.pathLossExponent)), room loss \(String(format: "%.1f", cal.roomLossDB)) dB, \
        gateway offsets beyond ±\(Int(VenueCalibration.offsetDeadZoneDB)) dB: \(offsets.isEmpty ? "none" : offsets.joined(separator: ", ")), \
        reception sensitivity by expected RSSI: \(cal.receptionSummary)\(reliability) (exponent and room loss from \(Int(cal.updates)) confident seconds' worth, the level from \(Int(cal.levelEvidence)) seconds' worth)\(notificationSummary.map { "; " + $0 } ?? "")
        """
    }

    /// Pending lines by (time, rank, line number): stable for equal times and ranks. The heap
    /// moves small keys; each line's parsed input waits in a slot until it is popped.
    struct Heap<Payload> {
        struct Item { var time: Double; var rank: Int; var line: Int; var input: Payload }
        private struct Key: Comparable {
            var time: Double
            var rank: Int
            var line: Int
            var slot: Int
            static func < (a: Key, b: Key) -> Bool { (a.time, a.rank, a.line) < (b.time, b.rank, b.line) }
            static func == (a: Key, b: Key) -> Bool { a.time == b.time && a.rank == b.rank && a.line == b.line }
        }
        private var keys = HeapModule.Heap<Key>()
        private var slots: [Payload?] = []
        private var freeSlots: [Int] = []
        var peekTime: Double? { keys.min?.time }

        mutating func push(_ item: Item) {
            let slot: Int
            if let reused = freeSlots.popLast() { slot = reused; slots[slot] = item.input } else { slot = slots.count; slots.append(item.input) }
            keys.insert(Key(time: item.time, rank: item.rank, line: item.line, slot: slot))
        }

        mutating func pop() -> Item? {
            guard let top = keys.popMin() else { return nil }
            let input = slots[top.slot].take()!
            freeSlots.append(top.slot)
            return Item(time: top.time, rank: top.rank, line: top.line, input: input)
        }
    }
}

/// Reads a file (or standard input) line by line in large chunks.
final class LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var eof = false
    private var number = 0

    init?(path: String) {
        if path == "-" { handle = .standardInput } else {
            guard let h = FileHandle(forReadingAtPath: path) else { return nil }
            handle = h
        }
    }

    /// The next line (without its newline) and its 1-based number.
    func next() -> (Int, ArraySlice<UInt8>)? {
        while true {
            if let nl = buffer[start...].firstIndex(of: 0x0A) {
                let line = buffer[start..<nl]
                start = nl + 1
                number += 1
                return (number, line)
            }
            if eof {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                number += 1
                return (number, line)
            }
            buffer.removeFirst(start)
            start = 0
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty { eof = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}

/// Buffered JSONL output.
final class OutputWriter {
    private let handle: FileHandle?
    private var buffer = Data()

    init(handle: FileHandle) { self.handle = handle }

    /// A writer that keeps nothing (`waymark site calibrate` needs the engine, not its output).
    init() { handle = nil }

    init?(path: String) {
        guard let h = try? OutputFile.open(path) else { return nil }
        handle = h
    }

    func write(_ line: Data) {
        guard handle != nil else { return }
        buffer.append(line)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        handle?.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
