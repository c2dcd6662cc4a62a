import WaymarkCore

/// Appends JSON Lines for simulator output to a byte buffer without going through `JSONEncoder`:
/// sightings in the replay format and truth lines. Ids are validated identifiers (no characters
/// that need escaping); times are written in Unix seconds with millisecond precision.
public struct JSONLineEncoder: Sendable {
    private let devices: [[UInt8]]
    private let deviceTx: [Int]
    private let gateways: [[UInt8]]
    private let regions: [[UInt8]]

    public init(scenario: Scenario) {
        devices = scenario.devices.map { Array($0.id.rawValue.utf8) }
        deviceTx = scenario.devices.map { Int($0.advertisedPowerDBm.rounded()) }
        gateways = scenario.site.gateways.map { Array($0.id.utf8) }
        regions = scenario.site.regions.map { Array($0.id.utf8) }
    }

    /// `{"t":…,"gateway":"…","device":"…","rssi":-77,"tx":-59}` and a newline.
    public func appendSighting(_ s: SimulatedSighting, to out: inout [UInt8]) {
        Self.append("{\"t\":", to: &out)
        Self.appendTime(s.time, to: &out)
        Self.append(",\"gateway\":\"", to: &out)
        out.append(contentsOf: gateways[Int(s.gateway)])
        Self.append("\",\"device\":\"", to: &out)
        out.append(contentsOf: devices[Int(s.device)])
        Self.append("\",\"rssi\":", to: &out)
        Self.appendInt(Int(s.rssi), to: &out)
        Self.append(",\"tx\":", to: &out)
        Self.appendInt(deviceTx[Int(s.device)], to: &out)
        Self.append("}\n", to: &out)
    }

    /// `{"type":"truth","device":"…","region":"…","entered":…,"exited":…}` and a newline.
    public func appendTruth(_ v: TrueVisit, to out: inout [UInt8]) {
        Self.append("{\"type\":\"truth\",\"device\":\"", to: &out)
        out.append(contentsOf: devices[v.device])
        Self.append("\",\"region\":\"", to: &out)
        out.append(contentsOf: regions[v.region])
        Self.append("\",\"entered\":", to: &out)
        Self.appendTime(v.entered, to: &out)
        Self.append(",\"exited\":", to: &out)
        Self.appendTime(v.exited, to: &out)
        Self.append("}\n", to: &out)
    }

    /// `{"type":"presence","device":"…","entered":…,"exited":…,"stationary":false}`: when the
    /// device was in the venue at all (the evaluator's denominator for rates per device-hour).
    public func appendPresence(device: Int, entered: Double, exited: Double, stationary: Bool, to out: inout [UInt8]) {
        Self.append("{\"type\":\"presence\",\"device\":\"", to: &out)
        out.append(contentsOf: devices[device])
        Self.append("\",\"entered\":", to: &out)
        Self.appendTime(entered, to: &out)
        Self.append(",\"exited\":", to: &out)
        Self.appendTime(exited, to: &out)
        Self.append(stationary ? ",\"stationary\":true}\n" : ",\"stationary\":false}\n", to: &out)
    }

    @inline(__always)
    static func append(_ s: StaticString, to out: inout [UInt8]) {
        s.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// Non-negative or negative whole numbers in decimal.
    static func appendInt(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var v = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            repeat {
                buf[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0
            for i in stride(from: n - 1, through: 0, by: -1) { out.append(buf[i]) }
        }
    }

    /// Seconds with exactly three decimals, e.g. `1780304400.125`.
    static func appendTime(_ t: Double, to out: inout [UInt8]) {
        let ms = Int((t * 1000).rounded())
        let negative = ms < 0
        let m = ms.magnitude
        if negative { out.append(UInt8(ascii: "-")) }
        appendInt(Int(m / 1000), to: &out)
        out.append(UInt8(ascii: "."))
        let frac = Int(m % 1000)
        out.append(UInt8(ascii: "0") + UInt8(frac / 100))
        out.append(UInt8(ascii: "0") + UInt8(frac / 10 % 10))
        out.append(UInt8(ascii: "0") + UInt8(frac % 10))
    }
}
