import Foundation
import WaymarkCore

/// `--source replay:FILE`: an `hcidump --raw` capture or a sightings JSONL file (see
/// ``ReplayParser``), at recorded speed scaled by `rate`, or as fast as possible (`rate` 0).
///
/// Events of a capture without timestamps are spaced `eventInterval` seconds apart from
/// `startTime` (default: the wall clock when the replay starts).
///
/// `@unchecked Sendable`: the only mutable state, the stop flag, is behind `lock`.
public final class ReplaySource: SightingSource, @unchecked Sendable {
    public let path: String
    public let rate: Double
    public let eventInterval: Double
    public let startTime: Double?
    /// Replay the file this many times in a row (benchmarks); times continue from one pass to the next.
    public let repetitions: Int
    /// Wall-clock time at which the first event is due (default: when the replay starts).
    public let paceStart: Double?
    private let lock = NSLock()
    private var stopped = false

    public init(path: String, rate: Double, eventInterval: Double = 0.01, startTime: Double? = nil, repetitions: Int = 1,
                paceStart: Double? = nil) {
        self.path = path
        self.rate = rate
        self.eventInterval = eventInterval
        self.startTime = startTime
        self.repetitions = max(1, repetitions)
        self.paceStart = paceStart
    }

    public var name: String { "replay:\(path)" }
    public var usesWallClock: Bool { false }

    public func stop() { lock.withLock { stopped = true } }
    private var isStopped: Bool { lock.withLock { stopped } }

    public func run(into sink: any SightingSink) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SourceError("replay: cannot read '\(path)': check the path given as --source replay:FILE and its permissions")
        }
        sink.sourceStateChanged(.replay)
        let bytes = [UInt8](data)
        // Line ranges, found once and reused by every repetition.
        var lines: [Range<Int>] = []
        var lineStart = 0
        for i in bytes.indices where bytes[i] == 0x0A {
            lines.append(lineStart..<i)
            lineStart = i + 1
        }
        lines.append(lineStart..<bytes.count)
        let base = startTime ?? Date().timeIntervalSince1970
        var index = 0
        var pace: (event: Double, wall: Double)?
        var passOffset = 0.0
        var lastTime = base
        var stopped = false
        for _ in 0..<repetitions {
            var parser = ReplayParser()
            var passFirst: Double?
            var check = 0
            func handle(_ item: ReplayItem) {
                check &+= 1
                if check & 255 == 0, isStopped { stopped = true }
                if stopped { return }
                switch item {
                case .hciEvent(let event, let recorded, _):
                    var t = recorded.map { $0 + passOffset } ?? base + Double(index) * eventInterval
                    if recorded != nil, passFirst == nil { passFirst = recorded }
                    index += 1
                    if t < lastTime - 86_400 { t = lastTime }
                    lastTime = t
                    wait(until: t, pace: &pace)
                    event.withUnsafeBytes { sink.deliver(hciEvent: $0, time: t) }
                case .sighting(var record, _):
                    if passFirst == nil { passFirst = record.time }
                    record.time += passOffset
                    lastTime = record.time
                    wait(until: record.time, pace: &pace)
                    sink.deliver(record: record)
                case .malformed(let line, let reason):
                    sink.deliverMalformed(line: line, reason: reason)
                }
            }
            for range in lines {
                parser.feed(bytes: bytes[range], emit: handle)
                if stopped { return }
            }
            for item in parser.finish() { handle(item) }
            if stopped || isStopped { return }
            // The next pass continues after this one, one interval later.
            if let first = passFirst { passOffset += lastTime - (first + passOffset) + eventInterval }
        }
        sink.sourceStateChanged(.done)
    }

    /// Sleeps so that event time `t` is delivered at the recorded pace (scaled by `rate`).
    private func wait(until t: Double, pace: inout (event: Double, wall: Double)?) {
        guard rate > 0 else { return }
        let now = Date().timeIntervalSince1970
        if pace == nil { pace = (t, paceStart ?? now) }
        guard let p = pace else { return }
        let due = p.wall + (t - p.event) / rate
        var remaining = due - now
        while remaining > 0 {
            if isStopped { return }
            Thread.sleep(forTimeInterval: min(remaining, 0.1))
            remaining = due - Date().timeIntervalSince1970
        }
    }
}
