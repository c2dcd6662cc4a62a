import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkFusion
import WaymarkNotify

/// A small store on two floors: the entrance and two aisles on floor 0 (major 1), a cafe on
/// floor 1 (major 2), all under one venue UUID; plus a corridor with no iBeacon identity.
enum NotifyVenue {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let other = "B9407F30-F5F8-466E-AFF9-25556B57FE6D"

    static func yaml(rules: String, timezone: String? = nil) -> String {
        """
        site: store
        \(timezone.map { "timezone: \($0)" } ?? "")
        gateways:
          - { id: gw-door, position: [0, 0] }
          - { id: gw-a, position: [10, 0] }
          - { id: gw-b, position: [20, 0] }
          - { id: gw-cafe, position: [20, 6], floor: 1 }
          - { id: gw-hall, position: [30, 0] }
        regions:
          - { id: door, name: Entrance, gateways: [gw-door], entrance: true, ibeacon: { uuid: "\(uuid)", major: 1, minor: 1 } }
          - { id: aisle-a, name: Aisle A, gateways: [gw-a], tags: [aisles], ibeacon: { uuid: "\(uuid)", major: 1, minor: 2 } }
          - { id: aisle-b, name: Aisle B, gateways: [gw-b], tags: [aisles], ibeacon: { uuid: "\(uuid)", major: 1, minor: 3 } }
          - { id: cafe, name: Café, gateways: [gw-cafe], tags: [food], ibeacon: { uuid: "\(uuid)", major: 2, minor: 1 } }
          - { id: hall, name: Hall, gateways: [gw-hall] }
        edges: [[door, aisle-a], [aisle-a, aisle-b], [aisle-b, cafe], [aisle-b, hall]]
        tracking:
          ibeacon_uuids: ["\(uuid)", "\(other)"]
        notifications:
        \(rules)
        """
    }

    static func site(_ rules: String, timezone: String? = nil) throws -> Site {
        try SiteLoader.parse(yaml: yaml(rules: rules, timezone: timezone)).site
    }

    /// The diagnostics of a site file that must not load.
    static func problems(_ rules: String, timezone: String? = nil) -> [SiteDiagnostic] {
        do {
            _ = try SiteLoader.parse(yaml: yaml(rules: rules, timezone: timezone))
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }
        }
    }

    static func device(_ n: UInt16, major: UInt16 = 7, uuid: String = uuid) -> DeviceID {
        DeviceID.ibeacon(uuid: BeaconUUID(uuid)!, major: major, minor: n)
    }

    /// 2026-06-01T00:00:00Z.
    static let day = 1_780_272_000.0
}

/// Drives a notifier with location changes and the engine's clock, as the aggregator does.
struct NotifierDriver {
    var notifier: Notifier
    var sent: [RuleNotification] = []

    init(_ site: Site) { notifier = Notifier(site: site) }

    /// The device's recorded region becomes `region` at `t` (nil: in none); the clock moves to `t`.
    mutating func move(_ device: DeviceID, to region: String?, at t: Double, confidence: Double? = 0.95) {
        notifier.observe(.location(.init(t: t, device: device, region: region, confidence: region == nil ? nil : confidence)), into: &sent)
        notifier.advance(to: t, into: &sent)
    }

    /// Only the clock moves (other devices' evidence).
    mutating func clock(_ t: Double) { notifier.advance(to: t, into: &sent) }

    func kinds(_ rule: String? = nil) -> [String] { sent.filter { rule == nil || $0.rule == rule }.map(\.kind.rawValue) }
}
