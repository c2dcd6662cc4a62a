import WaymarkCore

/// The replay JSONL form (one flat object per output, issue 3):
///
/// - `{"type":"state","t":…,"device":…,"region":…,"state":"inside","proximity":"near","distance_m":1.8}`
/// - `{"type":"location","t":…,"device":…,"region":"hall-a","confidence":0.97}` (`region` null when in
///   none; `confidence` absent then): the recorded (smoothed) current region
/// - `{"type":"live","t":…,"device":…,"region":"hall-a","confidence":0.81}`: the live region
/// - `{"type":"visit","t":…,"device":…,"region":…,"entered":…,"exited":…,"dwell_s":…,"inferred":false}`
/// - `{"type":"monitored","t":…,"device":…,"regions":[…]}`
/// - `{"type":"journey","t":…,"device":…,"started":…,"ended":…,"regions":[…]}`
/// - `{"type":"transition","t":…,"device":…,"from":…,"to":…,"inferred":false}`
/// - `{"type":"forgotten","t":…,"device":…,"last_heard":…}`: the engine dropped the idle device
extension FusionOutput: Codable {
    enum CodingKeys: String, CodingKey {
        case type, t, device, region, state, proximity, regions, started, ended, entered, exited, inferred, from, to, confidence
        case distanceM = "distance_m"
        case dwellS = "dwell_s"
        case lastHeard = "last_heard"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(t, forKey: .t)
        try c.encode(device, forKey: .device)
        switch self {
        case .state(let o):
            try c.encode(o.region, forKey: .region)
            try c.encode(o.state, forKey: .state)
            try c.encode(o.proximity, forKey: .proximity)
            if let d = o.distanceM { try c.encode(d, forKey: .distanceM) } else { try c.encodeNil(forKey: .distanceM) }
        case .location(let o):
            if let r = o.region { try c.encode(r, forKey: .region) } else { try c.encodeNil(forKey: .region) }
            if let p = o.confidence { try c.encode((p * 1000).rounded() / 1000, forKey: .confidence) }
        case .live(let o):
            if let r = o.region { try c.encode(r, forKey: .region) } else { try c.encodeNil(forKey: .region) }
            if let p = o.confidence { try c.encode((p * 1000).rounded() / 1000, forKey: .confidence) }
        case .visit(let o):
            try c.encode(o.region, forKey: .region)
            try c.encode(o.entered, forKey: .entered)
            try c.encode(o.exited, forKey: .exited)
            try c.encode((o.dwellS * 1000).rounded() / 1000, forKey: .dwellS)
            try c.encode(o.inferred, forKey: .inferred)
        case .monitored(let o):
            try c.encode(o.regions, forKey: .regions)
        case .journey(let o):
            try c.encode(o.started, forKey: .started)
            try c.encode(o.ended, forKey: .ended)
            try c.encode(o.regions, forKey: .regions)
        case .transition(let o):
            try c.encode(o.from, forKey: .from)
            try c.encode(o.to, forKey: .to)
            try c.encode(o.inferred, forKey: .inferred)
        case .forgotten(let o):
            if let h = o.lastHeard { try c.encode(h, forKey: .lastHeard) } else { try c.encodeNil(forKey: .lastHeard) }
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        let t = try c.decode(Double.self, forKey: .t)
        let device = try c.decode(DeviceID.self, forKey: .device)
        switch type {
        case "state":
            self = .state(.init(
                t: t, device: device, region: try c.decode(String.self, forKey: .region),
                state: try c.decode(RegionState.self, forKey: .state),
                proximity: try c.decode(Proximity.self, forKey: .proximity),
                distanceM: try c.decodeIfPresent(Double.self, forKey: .distanceM)))
        case "location":
            self = .location(.init(t: t, device: device, region: try c.decodeIfPresent(String.self, forKey: .region),
                                   confidence: try c.decodeIfPresent(Double.self, forKey: .confidence)))
        case "live":
            self = .live(.init(t: t, device: device, region: try c.decodeIfPresent(String.self, forKey: .region),
                               confidence: try c.decodeIfPresent(Double.self, forKey: .confidence)))
        case "visit":
            self = .visit(.init(
                t: t, device: device, region: try c.decode(String.self, forKey: .region),
                entered: try c.decode(Double.self, forKey: .entered), exited: try c.decode(Double.self, forKey: .exited),
                inferred: try c.decodeIfPresent(Bool.self, forKey: .inferred) ?? false))
        case "monitored":
            self = .monitored(.init(t: t, device: device, regions: try c.decode([String].self, forKey: .regions)))
        case "journey":
            self = .journey(.init(
                t: t, device: device, started: try c.decode(Double.self, forKey: .started),
                ended: try c.decode(Double.self, forKey: .ended), regions: try c.decode([String].self, forKey: .regions)))
        case "transition":
            self = .transition(.init(
                t: t, device: device, from: try c.decode(String.self, forKey: .from),
                to: try c.decode(String.self, forKey: .to),
                inferred: try c.decodeIfPresent(Bool.self, forKey: .inferred) ?? false))
        case "forgotten":
            self = .forgotten(.init(t: t, device: device, lastHeard: try c.decodeIfPresent(Double.self, forKey: .lastHeard)))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: c,
                debugDescription: "unknown output type '\(type)' (expected state, location, live, visit, monitored, journey, transition or forgotten)")
        }
    }
}
