import WaymarkJSON

// The JSON of the wire messages that `waymark bridge`, `waymark homeassistant` and the aggregator's
// own status publish, written with WaymarkJSON. Same keys as the types' `Codable` forms (absent
// optionals left out), so every reader of the topics — the aggregator's decoders included — reads
// them as it reads waymark-edge's (WireMessagesJSONTests decodes them back).

extension SightingBatch {
    /// The batch as published on `…/gateways/<gw>/sightings`.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(120 + sightings.count * 200)
        JSONValue.object([
            ("v", .int(v)),
            ("gateway", .string(gateway)),
            ("boot", .string(boot)),
            ("seq", .int(Int(clamping: seq))),
            ("start", .double(start)),
            ("end", .double(end)),
            ("sightings", .array(sightings.map(\.jsonValue))),
        ]).render(into: &out)
        return out
    }
}

extension SightingBatch.Entry {
    var jsonValue: JSONValue {
        var members: [(String, JSONValue)] = [
            ("device", .string(device.rawValue)),
            ("count", .int(count)),
            ("rssi_max", .double(rssiMax)),
            ("rssi_mean", .double(rssiMean)),
            ("rssi_last", .double(rssiLast)),
        ]
        if let tx { members.append(("tx", .double(tx))) }
        members.append(("first", .double(first)))
        members.append(("last", .double(last)))
        if let telemetry {
            var t: [(String, JSONValue)] = []
            if let mv = telemetry.batteryMV { t.append(("battery_mv", .int(mv))) }
            if let c = telemetry.temperatureC { t.append(("temperature_c", .double(c))) }
            members.append(("telemetry", .object(t)))
        }
        return .object(members)
    }
}

extension GatewayStatus {
    /// The status as retained on `…/gateways/<gw>/status` (and as the last will).
    public var jsonBytes: [UInt8] {
        var members: [(String, JSONValue)] = [("state", .string(state.rawValue)), ("gateway", .string(gateway))]
        if let version { members.append(("version", .string(version))) }
        if let boot { members.append(("boot", .string(boot))) }
        if let spoolDepth { members.append(("spool_depth", .int(spoolDepth))) }
        if let spoolDropped { members.append(("spool_dropped", .int(spoolDropped))) }
        if let scan { members.append(("scan", .string(scan))) }
        if let t { members.append(("t", .double(t))) }
        var out: [UInt8] = []
        JSONValue.object(members).render(into: &out)
        return out
    }
}

extension ServiceStatus {
    /// The status as retained on `…/aggregator/status` or `…/homeassistant/status`.
    public var jsonBytes: [UInt8] {
        var members: [(String, JSONValue)] = [
            ("state", .string(state.rawValue)), ("service", .string(service)), ("site", .string(site)),
        ]
        if let version { members.append(("version", .string(version))) }
        if let t { members.append(("t", .double(t))) }
        if let shards { members.append(("shards", .array(shards.map { .int($0) }))) }
        if let shardCount { members.append(("shard_count", .int(shardCount))) }
        if let instance { members.append(("instance", .string(instance))) }
        var out: [UInt8] = []
        JSONValue.object(members).render(into: &out)
        return out
    }
}
