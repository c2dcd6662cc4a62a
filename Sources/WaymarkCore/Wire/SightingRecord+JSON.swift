/// Parsing of the sightings JSONL replay format without Foundation (fast, and usable from the
/// pure core).
///
/// A line is one flat JSON object. Sighting lines:
/// `{"t": 1581249601.41, "gateway": "gw-lobby", "device": "mac:e7-8f-13-56-24-ce", "rssi": -77, "tx": -59}`
/// with `t` in Unix seconds or as an ISO-8601 string (`2020-02-09T12:00:01.41Z`, offsets `+01:00`
/// allowed), `tx` optional (or null). Gateway status lines (to replay outages):
/// `{"t": 1581249700, "gateway": "gw-lobby", "status": "offline"}` (`online` / `offline`).
/// Unknown keys are ignored, so the simulator may add ground truth next to a sighting.
public enum ReplayInput: Hashable, Sendable {
    case sighting(SightingRecord)
    case gatewayStatus(gateway: String, online: Bool, time: Double)

    public var time: Double {
        switch self {
        case .sighting(let s): s.time
        case .gatewayStatus(_, _, let t): t
        }
    }

    /// The gateway that heard the sighting, or whose status it is.
    public var gateway: String {
        switch self {
        case .sighting(let s): s.gateway
        case .gatewayStatus(let g, _, _): g
        }
    }

    /// Only the time of a line (its `t`), the rest skipped unread; nil when it has none that reads.
    /// For a first pass over a file (`waymark replay` measuring its disorder), much cheaper than
    /// `parse`.
    public static func time(jsonLine bytes: UnsafeBufferPointer<UInt8>) -> Double? { ReplayLine.time(bytes) }

    /// Parses one line; the error says what is wrong and how to write it instead.
    public static func parse(jsonLine line: some StringProtocol) throws(ReplayInputError) -> ReplayInput {
        var text = String(line)
        let read = text.withUTF8 { bytes in Result { () throws(ReplayInputError) in try ReplayLine(bytes) } }
        let fields = try read.get()
        func string(_ value: ReplayLine.Value?, _ key: String) throws(ReplayInputError) -> String? {
            switch value {
            case nil, .null?: return nil
            case .string(let s)?: return s
            case let v?: throw ReplayInputError("'\(key)' must be a string, got \(v)")
            }
        }
        func number(_ value: ReplayLine.Value?, _ key: String) throws(ReplayInputError) -> Double? {
            switch value {
            case nil, .null?: return nil
            case .number(let d)?: return d
            case let v?: throw ReplayInputError("'\(key)' must be a number, got \(v)")
            }
        }
        let time: Double
        switch fields.t {
        case .number(let d)?:
            guard d.isFinite else { throw ReplayInputError("'t' must be finite Unix seconds") }
            if let problem = UnixSeconds.problem(d) { throw ReplayInputError(problem) }
            time = d
        case .string(let s)?:
            guard let d = ISO8601.parse(s) else {
                throw ReplayInputError("'t' string '\(s)' is not ISO-8601 with a zone, e.g. 2020-02-09T12:00:01.41Z or 2020-02-09T13:00:01+01:00")
            }
            time = d
        case nil, .null?: throw ReplayInputError("missing 't' (Unix seconds, or an ISO-8601 string)")
        case let v?: throw ReplayInputError("'t' must be Unix seconds or an ISO-8601 string, got \(v)")
        }
        guard let gateway = try string(fields.gateway, "gateway"), !gateway.isEmpty else { throw ReplayInputError("missing 'gateway' (a gateway id of the site)") }
        if let status = try string(fields.status, "status") {
            guard status == "online" || status == "offline" else { throw ReplayInputError("'status' must be \"online\" or \"offline\", got \"\(status)\"") }
            return .gatewayStatus(gateway: gateway, online: status == "online", time: time)
        }
        guard let deviceText = try string(fields.device, "device") else { throw ReplayInputError("missing 'device' (e.g. \"mac:e7-8f-13-56-24-ce\"), or 'status' for a gateway status line") }
        guard let device = DeviceID(deviceText) else {
            if let meant = DeviceID.likelyMeant(deviceText) {
                throw ReplayInputError("'device' '\(deviceText)' is not a device id as written: write it '\(meant)' (lower case; a MAC address as mac:aa-bb-cc-dd-ee-ff)")
            }
            throw ReplayInputError("'device' '\(deviceText)' is not a device id (ibeacon:<uuid>:<major>:<minor>, eddystone:<ns>:<inst>, altbeacon:…, mac:aa-bb-cc-dd-ee-ff or anon:<hex>)")
        }
        guard let rssi = try number(fields.rssi, "rssi") else { throw ReplayInputError("missing 'rssi' (dBm, e.g. -77)") }
        let tx = try number(fields.tx, "tx")
        return .sighting(SightingRecord(time: time, gateway: gateway, device: device, rssi: rssi, tx: tx))
    }
}

/// Times in Unix seconds, as every input carries them, and the mistake to catch: a time in
/// milliseconds, microseconds or nanoseconds (as many loggers and datasets write it) read as
/// seconds lies tens of thousands of years ahead and would be fused as such, silently.
public enum UnixSeconds {
    /// The latest time taken as Unix seconds: 10¹¹ s is the year 5138.
    public static let limit = 1e11

    /// Nil for a plausible time in seconds; else what is wrong with `t` and how to fix it.
    public static func problem(_ t: Double) -> String? {
        guard t >= limit else { return nil }
        let (unit, divisor) = t < 1e14 ? ("milliseconds", "1,000") : t < 1e17 ? ("microseconds", "1,000,000") : ("nanoseconds", "1,000,000,000")
        return "'t' \(t) is not Unix seconds (that would be after the year 5000); it looks like \(unit) since 1970: divide it by \(divisor)"
    }

    /// Unix seconds of an ISO-8601 time with a zone (`2020-02-09T12:00:01.41Z`, `…+01:00`), the
    /// form the replay format accepts for `t`; nil for anything else.
    public static func parse(iso8601 text: String) -> Double? { ISO8601.parse(text) }
}

/// Why a replay line was not read.
public struct ReplayInputError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Calendar arithmetic for ISO-8601 timestamps (proleptic Gregorian, UTC).
enum ISO8601 {
    /// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM|±HHMM)` → Unix seconds.
    static func parse(_ text: String) -> Double? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<(at + n) {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard b.count >= 20, let year = digits(0, 4), b[4] == 0x2D, let month = digits(5, 2), b[7] == 0x2D,
              let day = digits(8, 2), b[10] == 0x54 || b[10] == 0x20 || b[10] == 0x74,
              let hour = digits(11, 2), b[13] == 0x3A, let minute = digits(14, 2), b[16] == 0x3A,
              let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { fraction += Double(b[i] - 0x30) * scale; scale /= 10; i += 1 }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 0x5A || b[i] == 0x7A {
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            let sign = b[i] == 0x2D ? -1 : 1
            guard let oh = digits(i + 1, 2) else { return nil }
            var om = 0
            if let m = digits(i + 3, 2) { om = m; i += 5 } else if i + 3 < b.count, b[i + 3] == 0x3A, let m = digits(i + 4, 2) { om = m; i += 6 } else { return nil }
            guard oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else { return nil }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }
}

extension SightingRecord {
    /// Parses one sighting line of the replay JSONL (see `ReplayInput`); a gateway status line is an error here.
    public init(jsonLine line: some StringProtocol) throws(ReplayInputError) {
        switch try ReplayInput.parse(jsonLine: line) {
        case .sighting(let s): self = s
        case .gatewayStatus: throw ReplayInputError("a gateway status line, not a sighting")
        }
    }
}
