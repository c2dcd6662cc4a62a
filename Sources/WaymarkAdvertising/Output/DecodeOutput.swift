public import WaymarkJSON
import WaymarkCore

/// What `waymark decode` prints for one input: the decoded JSON or an error object, and whether
/// the input failed. Pure, so the CLI stays a thin loop over lines.
public enum DecodeOutput {
    /// One printed line.
    public struct Line: Sendable {
        public var json: JSONValue
        /// True when the input could not be decoded (the command's exit status becomes non-zero).
        public var failed: Bool

        public init(json: JSONValue, failed: Bool) {
            self.json = json
            self.failed = failed
        }
    }

    /// `{"error": {"code": …, "message": …}}` members.
    public static func error(code: String, message: String) -> JSONValue {
        .object([("code", .string(code)), ("message", .string(message))])
    }

    /// A failed line: `prefix` members, then `"error": {"code", "message"}`.
    public static func failure(code: String, message: String, prefix: [(String, JSONValue)] = []) -> Line {
        Line(json: .object(prefix + [("error", error(code: code, message: message))]), failed: true)
    }

    /// Decodes hex of an AD payload (white space, `:` and `-` separators allowed).
    public static func advertisingData(hex: some StringProtocol) -> Line {
        guard let bytes = Hex.decode(hex) else { return invalidHex(hex) }
        do {
            return Line(json: try AdvertisingData(parsing: bytes).decodeJSON, failed: false)
        } catch {
            return failure(code: error.code, message: error.message)
        }
    }

    /// Decodes hex of a full HCI event (with or without the leading H4 byte 0x04).
    public static func hciEvent(hex: some StringProtocol) -> Line {
        guard let bytes = Hex.decode(hex) else { return invalidHex(hex) }
        return hciEvent(bytes: bytes)
    }

    /// Decodes one HCI event. A report whose AD is malformed is printed with `ad_error` and
    /// marks the line failed, since part of the input was bad.
    public static func hciEvent(bytes: [UInt8], prefix: [(String, JSONValue)] = []) -> Line {
        do {
            let reports = try HCIEventDecoder.decode(bytes)
            let failed = reports.contains { $0.adError != nil }
            return Line(json: .object(prefix + [("reports", .array(reports.map(\.json)))]), failed: failed)
        } catch {
            return failure(code: error.code, message: error.message, prefix: prefix)
        }
    }

    static func invalidHex(_ text: some StringProtocol) -> Line {
        let digits = text.utf8.filter { Hex.nibble($0) != nil }.count
        let bad = text.unicodeScalars.first { c in
            !(c.properties.isWhitespace || c == ":" || c == "-" || (c.isASCII && Hex.nibble(UInt8(c.value)) != nil))
        }
        let why = bad.map { "character '\($0)' is not a hex digit" }
            ?? "\(digits) hex digits is an odd number; every byte needs two"
        return failure(code: "invalid-hex", message: "\(why); give bytes as hex such as '02 01 06' or '020106'")
    }
}

extension DecodeOutput {
    /// True for a well-formed H4 event that simply is not an advertising report (another event
    /// code or LE Meta subevent), which a capture may contain alongside reports.
    public static func isNonAdvertisingEvent(_ bytes: [UInt8]) -> Bool {
        switch HCIEventDecoder.parseHeader(bytes.span) {
        case .failure(.notLEMetaEvent), .failure(.unsupportedSubevent): return true
        default: return false
        }
    }
}
