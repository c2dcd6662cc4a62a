import Foundation
import WaymarkCore

/// One item of a replay file.
public enum ReplayItem: Sendable, Equatable {
    /// A raw HCI event (H4 `04 3E …`), with its capture time when the file has one.
    case hciEvent([UInt8], time: Double?, line: Int)
    /// One line of the sightings JSONL format.
    case sighting(SightingRecord, line: Int)
    /// A line that is neither; `reason` says what is wrong (never fatal: counted and skipped).
    case malformed(line: Int, reason: String)
}

/// Parses replay files line by line (pure; the caller reads the file).
///
/// Two formats, told apart by the first non-blank line:
/// - `hcidump --raw` output (optionally with `-t` timestamps, `YYYY-MM-DD HH:MM:SS.ffffff > 04 3E …`):
///   `> ` starts a received packet, continuation lines start with two spaces, `< ` (sent
///   commands) and header lines are skipped;
/// - JSONL (`{` first): sightings lines (`t`, `gateway`, `device`, `rssi`, optional `tx`), or
///   decoded-capture lines carrying the event as `"hex"`.
public struct ReplayParser: Sendable {
    public enum Format: String, Sendable { case hcidump, jsonl }

    public private(set) var format: Format?
    private var pending: (line: Int, hex: [UInt8], time: Double?, incoming: Bool, bad: Bool)?
    private var lineNumber = 0

    public init() {}

    /// Feeds one line (without its newline); returns the items it completes (0, 1 or 2).
    public mutating func feed(_ line: Substring) -> [ReplayItem] {
        var out: [ReplayItem] = []
        let bytes = Array(line.utf8)
        feed(bytes: bytes[...]) { out.append($0) }
        return out
    }

    /// Call at the end of the input: returns the last packet, if one is open.
    public mutating func finish() -> [ReplayItem] {
        flush().map { [$0] } ?? []
    }

    /// Feeds one line given as bytes (without its newline), handing completed items to `emit`.
    /// The allocation-light path used by ``ReplaySource``.
    public mutating func feed(bytes raw: ArraySlice<UInt8>, emit: (ReplayItem) -> Void) {
        lineNumber += 1
        var line = raw
        if line.last == 0x0D { line = line.dropLast() }
        if format == nil {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
            format = line.first == UInt8(ascii: "{") ? .jsonl : .hcidump
        }
        if format == .jsonl {
            if !line.isEmpty { emit(Self.parseJSONLine(Substring(String(decoding: line, as: UTF8.self)), line: lineNumber)) }
            return
        }
        if line.first == 0x20, pending != nil {
            if !Self.appendHex(line.dropFirst(), to: &pending!.hex) { pending!.bad = true }
            return
        }
        if let done = flush() { emit(done) }
        var body = line
        var time: Double?
        if let first = line.first, (0x30...0x39).contains(first) {
            // `-t` form: a timestamp, then the direction marker.
            let text = String(decoding: line, as: UTF8.self)[...]
            guard let marker = text.firstRange(of: " > ") ?? text.firstRange(of: " < "),
                  let t = Self.parseTimestamp(text[..<marker.lowerBound]) else {
                emit(.malformed(line: lineNumber, reason: "expected 'YYYY-MM-DD HH:MM:SS.ffffff > hex…' (hcidump -t)"))
                return
            }
            time = t
            body = line.dropFirst(text.utf8.distance(from: text.startIndex, to: marker.lowerBound) + 1)
        }
        let direction = body.first
        if (direction == UInt8(ascii: ">") || direction == UInt8(ascii: "<")), body.dropFirst().first == 0x20 {
            var hex: [UInt8] = []
            hex.reserveCapacity(48)
            let ok = Self.appendHex(body.dropFirst(2), to: &hex)
            pending = (lineNumber, hex, time, direction == UInt8(ascii: ">"), !ok)
        } else if body.isEmpty || body.starts(with: Self.snifferHeader) || body.starts(with: Self.deviceHeader) {
            // header lines and blank lines
        } else {
            emit(.malformed(line: lineNumber, reason: "not an hcidump --raw line (expected '> ', '< ' or a continuation indented by two spaces)"))
        }
    }

    private static let snifferHeader = Array("HCI sniffer".utf8)
    private static let deviceHeader = Array("device:".utf8)

    private mutating func flush() -> ReplayItem? {
        guard let p = pending else { return nil }
        pending = nil
        guard p.incoming else { return nil }
        if p.bad { return .malformed(line: p.line, reason: "the packet's bytes are not hex pairs") }
        return .hciEvent(p.hex, time: p.time, line: p.line)
    }

    /// Hex digit values, 0xFF for anything else.
    private static let nibbles: [UInt8] = (0..<256).map { c in
        switch c {
        case 0x30...0x39: UInt8(c - 0x30)
        case 0x41...0x46: UInt8(c - 0x41 + 10)
        case 0x61...0x66: UInt8(c - 0x61 + 10)
        default: 0xFF
        }
    }

    /// Appends space-separated hex pairs; false on anything else.
    static func appendHex(_ text: ArraySlice<UInt8>, to out: inout [UInt8]) -> Bool {
        nibbles.withUnsafeBufferPointer { table in
            var high: UInt8 = 0xFF
            for c in text {
                if c == 0x20 || c == 0x09 {
                    if high != 0xFF { return false }
                    continue
                }
                let v = table[Int(c)]
                if v == 0xFF { return false }
                if high != 0xFF { out.append(high << 4 | v); high = 0xFF } else { high = v }
            }
            return high == 0xFF
        }
    }

    /// `YYYY-MM-DD HH:MM:SS[.ffffff]` as UTC → Unix seconds.
    static func parseTimestamp(_ text: Substring) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-").compactMap { Int($0) }
        let clock = parts[1].split(separator: ":")
        guard date.count == 3, clock.count == 3, let h = Int(clock[0]), let m = Int(clock[1]),
              let s = Double(clock[2]) else { return nil }
        return Double(daysFromCivil(date[0], date[1], date[2]) * 86_400 + h * 3600 + m * 60) + s
    }

    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
