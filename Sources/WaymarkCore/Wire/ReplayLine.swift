import WaymarkJSON

/// The members of one replay JSONL line that `ReplayInput` maps (of a key given twice, the last),
/// read with `JSONReader`. A line is one flat object: strings, numbers, booleans and null; other
/// members are checked and ignored, and arrays or objects are refused, as the format has none.
struct ReplayLine {
    /// A member's value.
    enum Value: CustomStringConvertible {
        case string(String), number(Double), bool(Bool), null

        var description: String {
            switch self {
            case .string(let s): "\"\(s)\""
            case .number(let d): "\(d)"
            case .bool(let b): "\(b)"
            case .null: "null"
            }
        }
    }

    var t: Value?, gateway: Value?, device: Value?, rssi: Value?, tx: Value?, status: Value?

    /// Reads one line; the error says what is wrong and at which column.
    init(_ bytes: UnsafeBufferPointer<UInt8>) throws(ReplayInputError) {
        var reader = JSONReader(bytes)
        guard reader.peek() != nil else { throw ReplayInputError("empty line") }
        do {
            try read(&reader)
        } catch {
            throw ReplayInputError("not a JSON object line: \(error.message) at column \(error.offset + 1)")
        }
    }

    private mutating func read(_ reader: inout JSONReader) throws(JSONError) {
        var object = try reader.openObject()
        while try reader.next(in: &object) {
            let key = try reader.readKey()
            if key.equals("t") { t = try Self.value(&reader) }
            else if key.equals("gateway") { gateway = try Self.value(&reader) }
            else if key.equals("device") { device = try Self.value(&reader) }
            else if key.equals("rssi") { rssi = try Self.value(&reader) }
            else if key.equals("tx") { tx = try Self.value(&reader) }
            else if key.equals("status") { status = try Self.value(&reader) }
            else {
                try Self.refuseNested(&reader)
                try reader.skipValue()
            }
        }
        try reader.expectEnd()
    }

    /// Only the line's `t` (Unix seconds, or an ISO-8601 string), every other member skipped
    /// unread: a first pass over a file that needs nothing else (`waymark replay` measuring how
    /// far out of order a file is). Nil when the line has no readable time.
    static func time(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var reader = JSONReader(bytes)
        var time: Double?
        do throws(JSONError) {
            var object = try reader.openObject()
            while try reader.next(in: &object) {
                let key = try reader.readKey()
                guard key.equals("t") else {
                    try reader.skipValue()
                    continue
                }
                switch reader.peek() {
                case 0x22?: time = ISO8601.parse(try reader.readString().value)
                case 0x2D?, 0x30?, 0x31?, 0x32?, 0x33?, 0x34?, 0x35?, 0x36?, 0x37?, 0x38?, 0x39?:
                    let t = try reader.readNumber()
                    time = t.isFinite && UnixSeconds.problem(t) == nil ? t : nil
                default:
                    try reader.skipValue()
                    time = nil
                }
            }
            try reader.expectEnd()
        } catch {
            return nil
        }
        return time
    }

    private static func value(_ reader: inout JSONReader) throws(JSONError) -> Value {
        try refuseNested(&reader)
        switch reader.peek() {
        case 0x22: return .string(try reader.readString().value)
        case 0x74, 0x66: return .bool(try reader.readBool())
        case 0x6E:
            try reader.readNull()
            return .null
        case nil: throw reader.error("missing value")
        default: return .number(try reader.readNumber())
        }
    }

    private static func refuseNested(_ reader: inout JSONReader) throws(JSONError) {
        let next = reader.peek()
        if next == 0x7B || next == 0x5B { throw reader.error("nested objects and arrays are not supported") }
    }
}
