/// Turns a `SiteDocument` into a `Site`, collecting every problem with its field path and a fix.
public enum SiteValidator {
    /// Default `radius_m` of a region that does not set one.
    public static let defaultRadiusM = 3.0

    /// The site, or `SiteError` with all errors and warnings. Warnings alone do not fail; they are
    /// returned next to the site.
    public static func validate(_ doc: SiteDocument, file: String? = nil) throws(SiteError)
        -> (site: Site, warnings: [SiteDiagnostic])
    {
        var diags: [SiteDiagnostic] = []
        func error(_ path: String, _ message: String) { diags.append(.init(.error, path, message, file: file)) }
        func warning(_ path: String, _ message: String) { diags.append(.init(.warning, path, message, file: file)) }

        // site id
        let siteID = doc.site ?? ""
        if doc.site == nil {
            error("site", "missing; add `site: my-venue` (letters, digits, '-', '_', '.')")
        } else if !isTopicSafeID(siteID) {
            error("site", "'\(siteID)' is not a valid id; use 1–64 letters, digits, '-', '_' or '.' (it becomes an MQTT topic level)")
        }

        // gateways
        var gateways: [Gateway] = []
        var gatewaySeen: [String: Int] = [:]
        let gatewayEntries = doc.gateways ?? []
        if gatewayEntries.isEmpty { error("gateways", "no gateways; list at least one with `id` and `position: [x, y]`") }
        for (i, g) in gatewayEntries.enumerated() {
            let path = "gateways[\(i)]"
            guard let id = g.id else { error("\(path).id", "missing; every gateway needs an id such as gw-entrance"); continue }
            if !isTopicSafeID(id) { error("\(path).id", "'\(id)' is not a valid id; use 1–64 letters, digits, '-', '_' or '.'") }
            if let first = gatewaySeen[id] { error("\(path).id", "duplicate gateway id '\(id)' (also gateways[\(first)]); give each gateway its own id") }
            gatewaySeen[id] = i
            var position = Point(x: 0, y: 0)
            if let p = g.position {
                if p.count < 2 || p.count > 3 || !p.allSatisfy(\.isFinite) {
                    error("\(path).position", "must be [x, y] in metres, got \(p)")
                } else { position = Point(x: p[0], y: p[1]) }
            } else {
                error("\(path).position", "missing; add `position: [x, y]` in metres (used for edge lengths, the map and the simulator)")
            }
            let offset = g.rssiOffsetDB ?? 0
            if !(abs(offset) <= 30) { error("\(path).rssi_offset_db", "must be between -30 and 30 dB, got \(offset)") }
            gateways.append(Gateway(id: id, position: position, floor: g.floor ?? 0, rssiOffsetDB: offset))
        }
        let gatewayByID = Dictionary(gateways.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })

        // regions
        var regions: [Region] = []
        var regionSeen: [String: Int] = [:]
        var identitySeen: [IBeaconIdentity: Int] = [:]
        let regionEntries = doc.regions ?? []
        if regionEntries.isEmpty { error("regions", "no regions; list at least one with `id` and `gateways: [...]`") }
        for (i, r) in regionEntries.enumerated() {
            let path = "regions[\(i)]"
            guard let id = r.id else { error("\(path).id", "missing; every region needs an id such as hall-a"); continue }
            if !isTopicSafeID(id) { error("\(path).id", "'\(id)' is not a valid id; use 1–64 letters, digits, '-', '_' or '.'") }
            if let first = regionSeen[id] { error("\(path).id", "duplicate region id '\(id)' (also regions[\(first)]); give each region its own id") }
            regionSeen[id] = i
            let gws = r.gateways ?? []
            if gws.isEmpty {
                error("\(path).gateways", "region '\(id)' has no gateways; add `gateways: [<gateway id>]` naming the gateway(s) anchored there")
            }
            var anchored: [Gateway] = []
            for (j, gid) in gws.enumerated() {
                if let gw = gatewayByID[gid] { anchored.append(gw) } else {
                    error("\(path).gateways[\(j)]", "unknown gateway '\(gid)'; known gateways: \(gateways.map(\.id).joined(separator: ", "))")
                }
            }
            let radius = r.radiusM ?? defaultRadiusM
            if !(radius > 0 && radius.isFinite) { error("\(path).radius_m", "must be a positive distance in metres, got \(radius)") }
            var identity: IBeaconIdentity? = nil
            if let ib = r.ibeacon {
                identity = parseIBeacon(ib, path: "\(path).ibeacon", error: error)
                if let identity {
                    if let other = identitySeen[identity] {
                        error("\(path).ibeacon", "identity \(identity) is already used by regions[\(other)]; each region needs its own major/minor")
                    }
                    identitySeen[identity] = i
                }
            }
            var position: Point
            if let p = r.position {
                if p.count >= 2 && p.count <= 3 && p.allSatisfy(\.isFinite) { position = Point(x: p[0], y: p[1]) } else {
                    error("\(path).position", "must be [x, y] in metres, got \(p)")
                    position = Point(x: 0, y: 0)
                }
            } else if !anchored.isEmpty {
                let n = Double(anchored.count)
                position = Point(x: anchored.map(\.position.x).reduce(0, +) / n, y: anchored.map(\.position.y).reduce(0, +) / n)
            } else {
                position = Point(x: 0, y: 0)
            }
            if let room = r.room, !isTopicSafeID(room) {
                error("\(path).room", "'\(room)' is not a valid room name; use 1–64 letters, digits, '-', '_' or '.' (regions with the same room share one open space)")
            }
            for (j, tag) in (r.tags ?? []).enumerated() where !isTopicSafeID(tag) {
                error("\(path).tags[\(j)]", "'\(tag)' is not a valid tag; use 1–64 letters, digits, '-', '_' or '.'")
            }
            regions.append(Region(
                id: id, name: r.name ?? id, gateways: gws, radiusM: radius, ibeacon: identity,
                position: position, floor: r.floor ?? anchored.first?.floor ?? 0, isEntrance: r.entrance ?? false,
                room: r.room, tags: r.tags ?? []))
        }
        let regionByID = Dictionary(regions.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })

        // edges
        var edges: [RegionEdge] = []
        for (i, e) in (doc.edges ?? []).enumerated() {
            let path = "edges[\(i)]"
            if e.extraItems > 0 { error(path, "an edge joins two regions: write [from, to] or {from: a, to: b, length_m: 12}") }
            guard let from = e.from, let to = e.to else {
                error(path, "needs two region ids: [from, to] or {from: a, to: b}")
                continue
            }
            let a = regionByID[from], b = regionByID[to]
            if a == nil { error("\(path).from", "unknown region '\(from)'; known regions: \(regions.map(\.id).joined(separator: ", "))") }
            if b == nil { error("\(path).to", "unknown region '\(to)'; known regions: \(regions.map(\.id).joined(separator: ", "))") }
            if from == to { error(path, "joins region '\(from)' to itself; remove it") }
            guard let a, let b else { continue }
            let length = e.lengthM ?? a.position.distance(to: b.position)
            if let l = e.lengthM, !(l > 0 && l.isFinite) {
                error("\(path).length_m", "must be a positive length in metres, got \(l)")
                continue
            }
            if e.lengthM == nil && length <= 0 {
                warning(path, "regions '\(from)' and '\(to)' share a position, so the edge has length 0; set length_m")
            }
            edges.append(RegionEdge(from: from, to: to, lengthM: max(length, 0.01)))
        }

        // tracking
        var tracking = TrackingRules()
        if let t = doc.tracking {
            parseTracking(t, into: &tracking, error: error)
        }
        if tracking.isEmpty {
            warning("tracking", "no allow-list: gateways will publish nothing; add ibeacon_uuids, eddystone_namespaces, altbeacon_ids or macs")
        }

        // fusion
        let fusion = doc.fusion ?? FusionParameters()
        for (key, message) in fusion.problems() { error("fusion.\(key)", message) }
        for key in fusion.retiredKeysPresent {
            let replacement = FusionParameters.RetiredKey(rawValue: key)?.replacement ?? ""
            warning("fusion.\(key)", "is ignored since the probabilistic tracker (docs/fusion.md): \(replacement); remove the key")
        }

        // simulation
        var simulation = SimulationSettings(walls: doc.simulation?.walls ?? true)
        if let name = doc.simulation?.radio {
            if let profile = RadioProfile(rawValue: name) { simulation.radio = profile } else {
                let known = RadioProfile.allCases.map(\.rawValue).joined(separator: ", ")
                error("simulation.radio", "unknown radio profile '\(name)'; use one of \(known) (see docs/radio-model.md)")
            }
        }

        // calibration
        let (calibration, calibrationProblems) = Self.calibration(doc.calibration, gateways: Set(gateways.map(\.id)))
        for (path, message) in calibrationProblems { error(path, message) }

        // time zone and notification rules
        let timeZone = doc.timezone ?? "UTC"
        if timeZone.isEmpty || timeZone.utf8.count > 64 {
            error("timezone", "'\(timeZone)' is not a time zone; write an IANA name such as Europe/Paris or America/New_York (default UTC)")
        }
        let notifications = Self.notificationRules(doc.notifications ?? [], regions: regions, error: error, warning: warning)

        // receivers of other projects (waymark bridge)
        let foreign = Self.foreignGateways(doc.foreignGateways ?? [], gateways: gateways, error: error, warning: warning)

        let site = Site(id: siteID, gateways: gateways, regions: regions, edges: edges, tracking: tracking, fusion: fusion,
                        simulation: simulation, calibration: calibration, timeZone: timeZone, notifications: notifications,
                        foreignGateways: foreign)

        // graph connectivity (a warning: a venue may have separate wings on purpose)
        if !regions.isEmpty && diags.allSatisfy({ $0.severity != .error }) {
            let comps = site.graph.components()
            if comps.count > 1 {
                let parts = comps.map { "{" + $0.prefix(5).map { regions[$0].id }.joined(separator: ", ") + ($0.count > 5 ? ", …" : "") + "}" }
                warning("edges", "the beacon graph is split into \(comps.count) parts \(parts.joined(separator: " ")); the tracker can only guess a walk between them from straight-line distance, and records no path for it — add edges joining them")
            }
        }

        // a gateway inside a region's disc that no region lists (a warning: the radio model places
        // it there, Core Location's region state does not use it)
        if diags.allSatisfy({ $0.severity != .error }) {
            for (g, r, within) in site.unanchoredGatewayRegions() where within {
                warning("gateways[\(g)]", "gateway '\(gateways[g].id)' anchors no region but lies within region '\(regions[r].id)'; "
                    + "the tracker takes it as hanging in that room, but the region's inside / outside state does not use it — "
                    + "add it to the gateways of region '\(regions[r].id)' if it hangs there")
            }
        }

        // positions in another unit than metres (a warning: a sprawling venue is possible, but the
        // distances, radii and proximity of every region would be off by the same factor)
        if diags.allSatisfy({ $0.severity != .error }), let spacing = site.medianGatewaySpacing,
           spacing > Site.implausibleGatewaySpacingM {
            warning("gateways", "the gateways are a median of \(Int(spacing.rounded())) m from their nearest neighbour on the same floor, "
                + "but a BLE gateway hears a tag only about 10–30 m away indoors; positions, radius_m and length_m are in metres — "
                + "if the plan is in centimetres, feet or pixels, convert it")
        }

        if diags.contains(where: { $0.severity == .error }) { throw SiteError(diags) }
        return (site, diags)
    }

    /// 1–64 characters from [A-Za-z0-9._-]: safe as one MQTT topic level and in file names.
    public static func isTopicSafeID(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 64 && s.utf8.allSatisfy { c in
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
                || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ".")
        }
    }

    static func parseIBeacon(_ e: SiteDocument.IBeaconEntry, path: String, error: (String, String) -> Void) -> IBeaconIdentity? {
        guard let text = e.uuid else { error("\(path).uuid", "missing; add the beacon's proximity UUID"); return nil }
        guard let uuid = BeaconUUID(text) else {
            error("\(path).uuid", "'\(text)' is not a UUID; write 32 hex digits as 8-4-4-4-12, e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
            return nil
        }
        func u16(_ v: Int?, _ key: String) -> UInt16?? {
            guard let v else { return .some(nil) }
            guard (0...65535).contains(v) else { error("\(path).\(key)", "must be 0–65535, got \(v)"); return nil }
            return .some(UInt16(v))
        }
        guard let major = u16(e.major, "major"), let minor = u16(e.minor, "minor") else { return nil }
        guard let id = IBeaconIdentity(uuid: uuid, major: major, minor: minor) else {
            error("\(path).minor", "a minor needs a major; add `major:`")
            return nil
        }
        return id
    }

    static func parseTracking(_ t: SiteDocument.TrackingEntry, into rules: inout TrackingRules, error: (String, String) -> Void) {
        for (i, text) in (t.ibeaconUUIDs ?? []).enumerated() {
            let path = "tracking.ibeacon_uuids[\(i)]"
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard let uuid = BeaconUUID(parts[0]) else {
                error(path, "'\(text)' is not a UUID; write 8-4-4-4-12 hex such as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, optionally followed by :major or :major:minor")
                continue
            }
            let numbers = parts.dropFirst().map { UInt16($0) }
            guard parts.count <= 3, numbers.allSatisfy({ $0 != nil }),
                  let id = IBeaconIdentity(uuid: uuid, major: numbers.first ?? nil, minor: numbers.dropFirst().first ?? nil)
            else {
                error(path, "'\(text)': after the UUID write :major or :major:minor, each 0–65535")
                continue
            }
            rules.ibeacon.append(id)
        }
        for (i, e) in (t.ibeacons ?? []).enumerated() {
            if let id = parseIBeacon(e, path: "tracking.ibeacons[\(i)]", error: error) { rules.ibeacon.append(id) }
        }
        for (i, text) in (t.eddystoneNamespaces ?? []).enumerated() {
            let path = "tracking.eddystone_namespaces[\(i)]"
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            let ns = Hex.decode(parts[0])
            let inst = parts.count > 1 ? Hex.decode(parts[1]) : nil
            guard let ns, ns.count == 10, parts.count <= 2, parts.count == 1 || inst?.count == 6 else {
                error(path, "'\(text)' is not an Eddystone namespace; write 20 hex digits (10 bytes), optionally :instance with 12 hex digits")
                continue
            }
            rules.eddystone.append(.init(namespace: ns, instance: inst))
        }
        for (i, text) in (t.altbeaconIDs ?? []).enumerated() {
            let path = "tracking.altbeacon_ids[\(i)]"
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let id1 = BeaconUUID(parts[0])?.bytes ?? Hex.decode(parts[0])
            let rest = parts.dropFirst().map { UInt16($0) }
            guard let id1, !id1.isEmpty, id1.count <= 16, parts.count <= 3, rest.allSatisfy({ $0 != nil }) else {
                error(path, "'\(text)' is not an AltBeacon id; write id1 as a UUID or hex, optionally :id2 or :id2:id3 (0–65535)")
                continue
            }
            rules.altbeacon.append(.init(id1: id1, id2: rest.first ?? nil, id3: rest.dropFirst().first ?? nil))
        }
        for (i, text) in (t.macs ?? []).enumerated() {
            guard let mac = DeviceID.parseMAC(text) else {
                error("tracking.macs[\(i)]", "'\(text)' is not a MAC address; write six hex bytes as aa:bb:cc:dd:ee:ff")
                continue
            }
            rules.macs.append(mac)
        }
        rules.pseudonymous = t.pseudonymous ?? false
        rules.pseudonymSecret = t.pseudonymSecret
        if rules.pseudonymous && (rules.pseudonymSecret ?? "").utf8.count < 16 {
            error("tracking.pseudonym_secret", "pseudonymous tracking needs a secret of at least 16 characters (set it here or in WAYMARK_PSEUDONYM_SECRET)")
        }
    }
}
