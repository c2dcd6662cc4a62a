import WaymarkCore
import WaymarkJSON

/// Appends JSON Lines for simulator output to a byte buffer with `JSONWriter`, without going
/// through `JSONEncoder`: sightings in the replay format and truth lines. Ids are escaped once, up
/// front; times are written in Unix seconds with millisecond precision.
public struct JSONLineEncoder: Sendable {
    private let devices: [[UInt8]]
    private let deviceTx: [Int]
    private let gateways: [[UInt8]]
    private let regions: [[UInt8]]
    private let maxLine: Int

    public init(scenario: Scenario) {
        devices = scenario.devices.map { Self.escaped($0.id.rawValue) }
        deviceTx = scenario.devices.map { Int($0.advertisedPowerDBm.rounded()) }
        gateways = scenario.site.gateways.map { Self.escaped($0.id) }
        regions = scenario.site.regions.map { Self.escaped($0.id) }
        maxLine = 96 + (devices.map(\.count).max() ?? 0) + (gateways.map(\.count).max() ?? 0)
    }

    /// The contents of `text` as a JSON string, escaped where needed (validated ids need nothing).
    private static func escaped(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.appendEscaped(text.utf8, to: &out)
        return out
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
        i += JSONWriter.writeMilli(s.time, at: p + i)
        put(Self.gatewayKey)
        put(gateways[Int(s.gateway)])
        put(Self.deviceKey)
        put(devices[Int(s.device)])
        put(Self.rssiKey)
        i += JSONWriter.writeInteger(Int(s.rssi), at: p + i)
        put(Self.txKey)
        i += JSONWriter.writeInteger(deviceTx[Int(s.device)], at: p + i)
        put(Self.lineEnd)
        return i
    }

    private static let lineStart = Array("{\"t\":".utf8)
    private static let gatewayKey = Array(",\"gateway\":\"".utf8)
    private static let deviceKey = Array("\",\"device\":\"".utf8)
    private static let rssiKey = Array("\",\"rssi\":".utf8)
    private static let txKey = Array(",\"tx\":".utf8)
    private static let lineEnd = Array("}\n".utf8)

    /// `{"type":"truth","device":"…","region":"…","entered":…,"exited":…}` and a newline.
    public func appendTruth(_ v: TrueVisit, to out: inout [UInt8]) {
        JSONWriter.appendRaw("{\"type\":\"truth\",\"device\":\"", to: &out)
        out.append(contentsOf: devices[v.device])
        JSONWriter.appendRaw("\",\"region\":\"", to: &out)
        out.append(contentsOf: regions[v.region])
        JSONWriter.appendRaw("\",\"entered\":", to: &out)
        JSONWriter.appendMilli(v.entered, to: &out)
        JSONWriter.appendRaw(",\"exited\":", to: &out)
        JSONWriter.appendMilli(v.exited, to: &out)
        JSONWriter.appendRaw("}\n", to: &out)
    }

    /// `{"type":"presence","device":"…","entered":…,"exited":…,"stationary":false}`: when the
    /// device was in the venue at all (the evaluator's denominator for rates per device-hour).
    public func appendPresence(device: Int, entered: Double, exited: Double, stationary: Bool, to out: inout [UInt8]) {
        JSONWriter.appendRaw("{\"type\":\"presence\",\"device\":\"", to: &out)
        out.append(contentsOf: devices[device])
        JSONWriter.appendRaw("\",\"entered\":", to: &out)
        JSONWriter.appendMilli(entered, to: &out)
        JSONWriter.appendRaw(",\"exited\":", to: &out)
        JSONWriter.appendMilli(exited, to: &out)
        JSONWriter.appendRaw(stationary ? ",\"stationary\":true}\n" : ",\"stationary\":false}\n", to: &out)
    }
}
