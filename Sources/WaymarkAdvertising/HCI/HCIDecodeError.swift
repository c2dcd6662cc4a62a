/// Why an HCI event was rejected. Every case has a stable `code` (kebab-case, for JSON output and
/// counters) and a `message` that says what was wrong and what was expected.
public enum HCIDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No bytes at all.
    case empty
    /// The first byte is neither the H4 event packet indicator 0x04 nor the LE Meta event code 0x3E.
    case notEventPacket(firstByte: UInt8)
    /// The bytes end inside the event header (event code, parameter length, subevent, report count).
    case truncatedHeader(length: Int)
    /// The event is an HCI event but not the LE Meta event (0x3E).
    case notLEMetaEvent(eventCode: UInt8)
    /// The parameter length byte disagrees with the number of bytes that follow it.
    case parameterLengthMismatch(declared: Int, actual: Int)
    /// An LE Meta subevent other than Advertising Report (0x02) or Extended Advertising Report (0x0D).
    case unsupportedSubevent(UInt8)
    /// The report count is zero.
    case noReports
    /// Report `index` (0-based) runs past the end of the event.
    case truncatedReport(index: Int)
    /// All declared reports were read but bytes remain: the report count or a length is wrong.
    case reportCountMismatch(declared: Int, trailingBytes: Int)
    /// A legacy report declares more than 31 bytes of advertising data.
    case legacyDataTooLong(index: Int, length: Int)
    /// An extended report declares more than 229 bytes of advertising data.
    case extendedDataTooLong(index: Int, length: Int)

    /// A stable machine-readable identifier of the failure.
    public var code: String {
        switch self {
        case .empty: "empty-event"
        case .notEventPacket: "not-event-packet"
        case .truncatedHeader: "truncated-header"
        case .notLEMetaEvent: "not-le-meta-event"
        case .parameterLengthMismatch: "parameter-length-mismatch"
        case .unsupportedSubevent: "unsupported-subevent"
        case .noReports: "no-reports"
        case .truncatedReport: "truncated-report"
        case .reportCountMismatch: "report-count-mismatch"
        case .legacyDataTooLong: "legacy-data-too-long"
        case .extendedDataTooLong: "extended-data-too-long"
        }
    }

    /// A human explanation naming the offending field and the expected value.
    public var message: String {
        switch self {
        case .empty:
            "the HCI event is empty; expected an LE Meta event (04 3E … or 3E …)"
        case .notEventPacket(let b):
            "first byte is 0x\(hex2(b)); expected the H4 event indicator 0x04 or the LE Meta event code 0x3E"
        case .truncatedHeader(let n):
            "the event ends after \(n) bytes, inside its header; expected event code, parameter length, subevent and report count"
        case .notLEMetaEvent(let code):
            "event code is 0x\(hex2(code)); only the LE Meta event (0x3E) carries advertising reports"
        case .parameterLengthMismatch(let declared, let actual):
            "parameter length byte says \(declared) bytes but \(actual) follow; the event is truncated or has trailing bytes"
        case .unsupportedSubevent(let sub):
            "LE Meta subevent 0x\(hex2(sub)) is not an advertising report; expected 0x02 (advertising report) or 0x0D (extended advertising report)"
        case .noReports:
            "the report count is 0; an advertising report event carries 1 to 25 reports"
        case .truncatedReport(let i):
            "report \(i) runs past the end of the event; a length field or the report count is wrong"
        case .reportCountMismatch(let declared, let trailing):
            "after the \(declared) declared report(s) \(trailing) byte(s) remain; the report count or a data length is wrong"
        case .legacyDataTooLong(let i, let n):
            "report \(i) declares \(n) bytes of advertising data; legacy advertising data is at most 31 bytes"
        case .extendedDataTooLong(let i, let n):
            "report \(i) declares \(n) bytes of advertising data; an extended advertising report carries at most 229 bytes"
        }
    }

    public var description: String { "\(code): \(message)" }
}

/// Two upper-case hex digits, as byte values are written in messages (`0x3E`).
func hex2(_ b: UInt8) -> String {
    func digit(_ n: UInt8) -> UInt8 { n < 10 ? n + 0x30 : n + 0x37 }
    return String(decoding: [digit(b >> 4), digit(b & 0x0F)], as: UTF8.self)
}
