import Foundation
import WaymarkCore

/// Decodes a gateway status (`…/gateways/<gw>/status`, DESIGN.md §4) and checks every field
/// against `FieldRules`: a status is stored in `gateway_status`, so a value PostgreSQL would refuse
/// (a time beyond `timestamptz`, a spool depth beyond `integer`, a NUL in the version) is a
/// rejection here, not a failed write later.
enum StatusDecoder {
    struct Failure: Error, CustomStringConvertible {
        var reason: RejectReason
        var description: String
    }

    /// The members with loose types, so that a value of the right JSON type but outside its set or
    /// range is told apart from a malformed message.
    private struct Loose: Decodable {
        var state: String
        var gateway: String
        var version: String?
        var boot: String?
        var spoolDepth: Double?
        var spoolDropped: Double?
        var scan: String?
        var t: Double?

        enum CodingKeys: String, CodingKey {
            case state, gateway, version, boot, scan, t
            case spoolDepth = "spool_depth"
            case spoolDropped = "spool_dropped"
        }
    }

    static func decode(_ payload: [UInt8]) throws(Failure) -> GatewayStatus {
        guard String(validating: payload, as: UTF8.self) != nil else {
            throw Failure(reason: .badText, description: "the status is not valid UTF-8")
        }
        let s: Loose
        do { s = try JSONDecoder().decode(Loose.self, from: Data(payload)) } catch {
            throw Failure(reason: .malformed, description: "not a status object with 'state' and 'gateway': \(error)")
        }
        guard let state = GatewayStatus.State(rawValue: s.state) else {
            throw Failure(reason: .badEnum, description: "'state' must be online or offline")
        }
        if let r = FieldRules.checkText(s.gateway) { throw Failure(reason: r, description: "'gateway' is not a usable id") }
        for (name, value) in [("version", s.version), ("boot", s.boot)] {
            if let value, let r = FieldRules.checkText(value, required: false) {
                throw Failure(reason: r, description: "'\(name)' is longer than \(FieldRules.maxTextBytes) bytes or holds control characters")
            }
        }
        if let scan = s.scan, !FieldRules.scanValues.contains(scan) {
            throw Failure(reason: .badEnum, description: "'scan' must be one of \(FieldRules.scanValues.sorted())")
        }
        let numbers: [(String, Double?, ClosedRange<Double>, Bool)] = [
            ("spool_depth", s.spoolDepth, FieldRules.spoolDepthRange, true),
            ("spool_dropped", s.spoolDropped, FieldRules.spoolDroppedRange, true),
            ("t", s.t, FieldRules.reportedTimeRange, false),
        ]
        for (name, value, range, integer) in numbers {
            if let value, let r = FieldRules.checkNumber(value, in: range, integer: integer) {
                throw Failure(reason: r, description: "'\(name)' \(value) is not \(integer ? "an integer " : "")in \(range)")
            }
        }
        return GatewayStatus(state: state, gateway: s.gateway, version: s.version, boot: s.boot,
                             spoolDepth: s.spoolDepth.map { Int($0) }, spoolDropped: s.spoolDropped.map { Int($0) },
                             scan: s.scan, t: s.t)
    }
}
