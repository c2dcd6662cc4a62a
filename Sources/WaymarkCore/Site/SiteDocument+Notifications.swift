public import WaymarkJSON

extension SiteDocument {
    /// One item of `notifications:` as written (docs/notifications.md), checked by `SiteValidator`.
    public struct NotificationEntry: Decodable, Sendable {
        public var id: String?
        /// enter, exit, dwell or return.
        public var when: String?
        public var match: MatchEntry?
        public var devices: DevicesEntry?
        public var dwellS: Double?
        public var absenceS: Double?
        public var cooldownS: Double?
        /// One `{from, to}` mapping or a list of them.
        public var quietHours: [QuietHoursEntry]?
        public var minConfidence: Double?
        public var message: String?
        public var data: FreeFormValue?
        public var webhook: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, when, match, devices, message, data, webhook
            case dwellS = "dwell_s"
            case absenceS = "absence_s"
            case cooldownS = "cooldown_s"
            case quietHours = "quiet_hours"
            case minConfidence = "min_confidence"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decodeIfPresent(String.self, forKey: .id)
            when = try c.decodeIfPresent(String.self, forKey: .when)
            match = try c.decodeIfPresent(MatchEntry.self, forKey: .match)
            devices = try c.decodeIfPresent(DevicesEntry.self, forKey: .devices)
            dwellS = try c.decodeIfPresent(Double.self, forKey: .dwellS)
            absenceS = try c.decodeIfPresent(Double.self, forKey: .absenceS)
            cooldownS = try c.decodeIfPresent(Double.self, forKey: .cooldownS)
            minConfidence = try c.decodeIfPresent(Double.self, forKey: .minConfidence)
            message = try c.decodeIfPresent(String.self, forKey: .message)
            data = try c.decodeIfPresent(FreeFormValue.self, forKey: .data)
            webhook = try c.decodeIfPresent(String.self, forKey: .webhook)
            if let list = try? c.decodeIfPresent([QuietHoursEntry].self, forKey: .quietHours) {
                quietHours = list
            } else {
                quietHours = try c.decodeIfPresent(QuietHoursEntry.self, forKey: .quietHours).map { [$0] }
            }
        }

        /// `match:` — the regions a rule watches: the union of every selector given.
        public struct MatchEntry: Decodable, Sendable {
            /// Region ids.
            public var regions: [String]?
            /// Region tags (`regions[].tags`).
            public var tags: [String]?
            /// Storeys.
            public var floors: [Int]?
            /// iBeacon identities `UUID`, `UUID:major` or `UUID:major:minor`, matched against the
            /// regions' `ibeacon` identities (the whole venue, one floor or store, one exhibit).
            public var ibeacons: [String]?
            /// `true`: every region of the site.
            public var all: Bool?

            enum CodingKeys: String, CodingKey, CaseIterable { case regions, tags, floors, ibeacons, all }
        }

        /// `devices:` — which devices the rule applies to (default: every tracked device).
        public struct DevicesEntry: Decodable, Sendable {
            /// Id kinds: ibeacon, eddystone, altbeacon, mac, anon.
            public var kinds: [String]?
            /// Exact device ids.
            public var ids: [String]?
            /// iBeacon allow-list, `UUID`, `UUID:major` or `UUID:major:minor`.
            public var ibeacons: [String]?

            enum CodingKeys: String, CodingKey, CaseIterable { case kinds, ids, ibeacons }
        }

        /// `{from: "22:00", to: "07:00"}` in the site's time zone.
        public struct QuietHoursEntry: Decodable, Sendable {
            public var from: String?
            public var to: String?

            enum CodingKeys: String, CodingKey, CaseIterable { case from, to }
        }
    }

    /// Any YAML value under `data:`, kept as JSON (mappings with their keys sorted, so that the
    /// same file always gives the same bytes).
    public struct FreeFormValue: Decodable, Sendable {
        public var json: JSONValue

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        public init(from decoder: any Decoder) throws {
            if let object = try? decoder.container(keyedBy: Key.self) {
                var members: [(String, JSONValue)] = []
                for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                    members.append((key.stringValue, try object.decode(FreeFormValue.self, forKey: key).json))
                }
                json = .object(members)
            } else if var list = try? decoder.unkeyedContainer() {
                var items: [JSONValue] = []
                while !list.isAtEnd { items.append(try list.decode(FreeFormValue.self).json) }
                json = .array(items)
            } else {
                let single = try decoder.singleValueContainer()
                if single.decodeNil() {
                    json = .null
                } else if let b = try? single.decode(Bool.self) {
                    json = .bool(b)
                } else if let i = try? single.decode(Int.self) {
                    json = .int(i)
                } else if let d = try? single.decode(Double.self), d.isFinite {
                    json = .double(d)
                } else {
                    json = .string(try single.decode(String.self))
                }
            }
        }
    }
}
