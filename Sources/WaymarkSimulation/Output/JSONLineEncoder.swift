import WaymarkCore

/// Appends JSON Lines for simulator output to a byte buffer without going through `JSONEncoder`:
/// sightings in the replay format and truth lines. Ids are validated identifiers (no characters
/// that need escaping); times are written in Unix seconds with millisecond precision.
public struct JSONLineEncoder: Sendable {
    private let devices: [[UInt8]]
    private let deviceTx: [Int]
    private let gateways: [[UInt8]]
    private let regions: [[UInt8]]
    private let maxLine: Int

    public init(scenario: Scenario) {
        devices = scenario.devices.map { Array($0.id.rawValue.utf8) }
        deviceTx = scenario.devices.map { Int($0.advertisedPowerDBm.rounded()) }
        gateways = scenario.site.gateways.map { Array($0.id.utf8) }
        regions = scenario.site.regions.map { Array($0.id.utf8) }
        maxLine = 96 + (devices.map(\.count).max() ?? 0) + (gateways.map(\.count).max() ?? 0)
    }

    /// An upper bound of the bytes one sighting line takes.
    public var maxSightingBytes: Int { maxLine }

    /// `{"t":…,"gateway":"…","device":"…","rssi":-77,"tx":-59}` and a newline.
    public func appendSighting(_ s: SimulatedSighting, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: maxLine))
        let n = out.withUnsafeMutableBufferPointer { writeSighting(s, at: $0.baseAddress! + start) }
        out.removeLast(maxLine - n)
    }

    /// Writes one sighting line at `p` (room for `maxSightingBytes`) and returns its length.
    @inline(__always)
    public func writeSighting(_ s: SimulatedSighting, at p: UnsafeMutablePointer<UInt8>) -> Int {
        var i = 0
        @inline(__always) func put(_ bytes: [UInt8]) {
            bytes.withUnsafeBufferPointer { (p + i).update(from: $0.baseAddress!, count: $0.count) }
            i += bytes.count
        }
        put(Self.lineStart)
        i += Self.writeTime(s.time, at: p + i)
        put(Self.gatewayKey)
        put(gateways[Int(s.gateway)])
        put(Self.deviceKey)
        put(devices[Int(s.device)])
        put(Self.rssiKey)
        i += Self.writeInt(Int(s.rssi), at: p + i)
        put(Self.txKey)
        i += Self.writeInt(deviceTx[Int(s.device)], at: p + i)
        put(Self.lineEnd)
        return i
    }

    private static let lineStart = Array("{\"t\":".utf8)
    private static let gatewayKey = Array(",\"gateway\":\"".utf8)
    private static let deviceKey = Array("\",\"device\":\"".utf8)
    private static let rssiKey = Array("\",\"rssi\":".utf8)
    private static let txKey = Array(",\"tx\":".utf8)
    private static let lineEnd = Array("}\n".utf8)

    /// Writes a whole number in decimal at `p`; returns its length (at most 20).
    @inline(__always)
    static func writeInt(_ value: Int, at p: UnsafeMutablePointer<UInt8>) -> Int {
        var i = 0
        if value < 0 { p[0] = UInt8(ascii: "-"); i = 1 }
        var v = value.magnitude
        var digits = 0
        var probe = v
        repeat { digits += 1; probe /= 10 } while probe > 0
        var j = i + digits - 1
        repeat {
            p[j] = UInt8(ascii: "0") + UInt8(v % 10)
            v /= 10
            j -= 1
        } while v > 0
        return i + digits
    }

    /// Writes seconds with exactly three decimals at `p`; returns the length.
    @inline(__always)
    static func writeTime(_ t: Double, at p: UnsafeMutablePointer<UInt8>) -> Int {
        let ms = Int((t * 1000).rounded())
        var i = 0
        if ms < 0 { p[0] = UInt8(ascii: "-"); i = 1 }
        let m = ms.magnitude
        i += writeInt(Int(m / 1000), at: p + i)
        let frac = Int(m % 1000)
        p[i] = UInt8(ascii: ".")
        p[i + 1] = UInt8(ascii: "0") + UInt8(frac / 100)
        p[i + 2] = UInt8(ascii: "0") + UInt8(frac / 10 % 10)
        p[i + 3] = UInt8(ascii: "0") + UInt8(frac % 10)
        return i + 4
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
