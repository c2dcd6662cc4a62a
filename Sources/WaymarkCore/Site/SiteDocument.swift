/// The site file as written, before validation: every field optional and loosely typed, so that the
/// validator can report each problem with its field path instead of failing on the first one.
public struct SiteDocument: Decodable, Sendable {
    public var site: String?
    public var gateways: [GatewayEntry]?
    public var regions: [RegionEntry]?
    public var edges: [EdgeEntry]?
    public var tracking: TrackingEntry?
    public var fusion: FusionParameters?
    public var simulation: SimulationEntry?
    public var calibration: CalibrationEntry?
    public var foreignGateways: [ForeignGatewayEntry]?
    /// IANA time zone of the venue (`Europe/Paris`); quiet hours and local times in notifications.
    public var timezone: String?
    public var notifications: [NotificationEntry]?

    /// `simulation: { radio: ideal | indoor | harsh, walls: true | false }`.
    public struct SimulationEntry: Decodable, Sendable {
        public var radio: String?
        public var walls: Bool?

        enum CodingKeys: String, CodingKey, CaseIterable { case radio, walls }
    }

    public struct GatewayEntry: Decodable, Sendable {
        public var id: String?
        public var position: [Double]?
        public var floor: Int?
        public var rssiOffsetDB: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, position, floor
            case rssiOffsetDB = "rssi_offset_db"
        }
    }

    public struct RegionEntry: Decodable, Sendable {
        public var id: String?
        public var name: String?
        public var gateways: [String]?
        public var radiusM: Double?
        public var ibeacon: IBeaconEntry?
        public var position: [Double]?
        public var floor: Int?
        public var entrance: Bool?
        public var room: String?
        /// Free labels that notification rules can match (`match: {tags: [exhibits]}`).
        public var tags: [String]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, name, gateways, ibeacon, position, floor, entrance, room, tags
            case radiusM = "radius_m"
        }
    }

    public struct IBeaconEntry: Decodable, Sendable {
        public var uuid: String?
        public var major: Int?
        public var minor: Int?

        enum CodingKeys: String, CodingKey, CaseIterable { case uuid, major, minor }
    }

    /// `[from, to]` or `{ from: …, to: …, length_m: … }`.
    public struct EdgeEntry: Decodable, Sendable {
        public var from: String?
        public var to: String?
        public var lengthM: Double?
        /// Items beyond two in the list form (an error).
        public var extraItems = 0

        enum CodingKeys: String, CodingKey, CaseIterable {
            case from, to
            case lengthM = "length_m"
        }

        public init(from decoder: any Decoder) throws {
            if var list = try? decoder.unkeyedContainer() {
                var items: [String] = []
                while !list.isAtEnd { items.append(try list.decode(String.self)) }
                from = items.first
                to = items.count > 1 ? items[1] : nil
                extraItems = max(0, items.count - 2)
            } else {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                from = try c.decodeIfPresent(String.self, forKey: .from)
                to = try c.decodeIfPresent(String.self, forKey: .to)
                lengthM = try c.decodeIfPresent(Double.self, forKey: .lengthM)
            }
        }
    }

    public struct TrackingEntry: Decodable, Sendable {
        /// UUID strings, or `UUID:major` / `UUID:major:minor`.
        public var ibeaconUUIDs: [String]?
        public var ibeacons: [IBeaconEntry]?
        /// Eddystone-UID namespace hex (20 digits), or `namespace:instance`.
        public var eddystoneNamespaces: [String]?
        /// AltBeacon id1 (UUID or hex), or `id1:id2` / `id1:id2:id3`.
        public var altbeaconIDs: [String]?
        public var macs: [String]?
        public var pseudonymous: Bool?
        public var pseudonymSecret: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case ibeaconUUIDs = "ibeacon_uuids"
            case ibeacons
            case eddystoneNamespaces = "eddystone_namespaces"
            case altbeaconIDs = "altbeacon_ids"
            case macs
            case pseudonymous
            case pseudonymSecret = "pseudonym_secret"
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case site, gateways, regions, edges, tracking, fusion, simulation, calibration, timezone, notifications
        case foreignGateways = "foreign_gateways"
    }

    /// Allowed keys per mapping in the file, for the loader's unknown-key check. The key of the
    /// dictionary is the path pattern with `[]` for any list element.
    public static let allowedKeys: [String: [String]] = [
        "": CodingKeys.allCases.map(\.rawValue),
        "gateways[]": GatewayEntry.CodingKeys.allCases.map(\.rawValue),
        "regions[]": RegionEntry.CodingKeys.allCases.map(\.rawValue),
        "regions[].ibeacon": IBeaconEntry.CodingKeys.allCases.map(\.rawValue),
        "edges[]": EdgeEntry.CodingKeys.allCases.map(\.rawValue),
        "tracking": TrackingEntry.CodingKeys.allCases.map(\.rawValue),
        "tracking.ibeacons[]": IBeaconEntry.CodingKeys.allCases.map(\.rawValue),
        "fusion": FusionParameters.keys,
        "simulation": SimulationEntry.CodingKeys.allCases.map(\.rawValue),
        "calibration": CalibrationEntry.CodingKeys.allCases.map(\.rawValue),
        "foreign_gateways[]": ForeignGatewayEntry.CodingKeys.allCases.map(\.rawValue),
        "notifications[]": NotificationEntry.CodingKeys.allCases.map(\.rawValue),
        "notifications[].match": NotificationEntry.MatchEntry.CodingKeys.allCases.map(\.rawValue),
        "notifications[].devices": NotificationEntry.DevicesEntry.CodingKeys.allCases.map(\.rawValue),
        "notifications[].quiet_hours": NotificationEntry.QuietHoursEntry.CodingKeys.allCases.map(\.rawValue),
        "notifications[].quiet_hours[]": NotificationEntry.QuietHoursEntry.CodingKeys.allCases.map(\.rawValue),
    ]
}
