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
        lineNumber += 1
        let text = line.hasSuffix("\r") ? line.dropLast() : line
        if format == nil {
            if text.allSatisfy({ $0 == " " || $0 == "\t" }) { return [] }
            format = text.first == "{" ? .jsonl : .hcidump
        }
        if format == .jsonl { return text.isEmpty ? [] : [Self.parseJSONLine(text, line: lineNumber)] }
        return feedDump(text)
    }

    /// Call at the end of the input: returns the last packet, if one is open.
    public mutating func finish() -> [ReplayItem] {
        flush().map { [$0] } ?? []
    }

    private mutating func feedDump(_ text: Substring) -> [ReplayItem] {
        var out: [ReplayItem] = []
        let utf8 = text.utf8
        if utf8.first == UInt8(ascii: " "), pending != nil {
            if !Self.appendHex(utf8.dropFirst(), to: &pending!.hex) { pending!.bad = true }
            return out
        }
        if let done = flush() { out.append(done) }
        var body = text
        var time: Double?
        if let first = utf8.first, (0x30...0x39).contains(first) {
            // `-t` form: a timestamp, then the direction marker.
            guard let marker = text.firstRange(of: " > ") ?? text.firstRange(of: " < "),
                  let t = Self.parseTimestamp(text[..<marker.lowerBound]) else {
                out.append(.malformed(line: lineNumber, reason: "expected 'YYYY-MM-DD HH:MM:SS.ffffff > hex…' (hcidump -t)"))
                return out
            }
            time = t
            body = text[text.index(after: marker.lowerBound)...]
        }
        if body.hasPrefix("> ") || body.hasPrefix("< ") {
            var hex: [UInt8] = []
            hex.reserveCapacity(48)
            let ok = Self.appendHex(body.utf8.dropFirst(2), to: &hex)
            pending = (lineNumber, hex, time, body.hasPrefix(">"), !ok)
        } else if body.hasPrefix("HCI sniffer") || body.hasPrefix("device:") || body.isEmpty {
            // header lines and blank lines
        } else {
            out.append(.malformed(line: lineNumber, reason: "not an hcidump --raw line (expected '> ', '< ' or a continuation indented by two spaces)"))
        }
        return out
    }

    private mutating func flush() -> ReplayItem? {
        guard let p = pending else { return nil }
        pending = nil
        guard p.incoming else { return nil }
        if p.bad { return .malformed(line: p.line, reason: "the packet's bytes are not hex pairs") }
        return .hciEvent(p.hex, time: p.time, line: p.line)
    }

    /// Appends space-separated hex pairs; false on anything else.
    static func appendHex(_ text: Substring.UTF8View.SubSequence, to out: inout [UInt8]) -> Bool {
        var high: UInt8?
        for c in text {
            if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") {
                if high != nil { return false }
                continue
            }
            guard let v = Hex.nibble(c) else { return false }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return high == nil
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
