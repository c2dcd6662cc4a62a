extension SiteValidator {
    /// Checks `foreign_gateways:` against the site's gateways: each entry names a known gateway
    /// once, gives exactly one receiver (an ESPresense room or a Theengs topic) that no other entry
    /// uses, and valid topics. Problems go to `error`/`warning` with their field paths.
    static func foreignGateways(_ entries: [SiteDocument.ForeignGatewayEntry], gateways: [Gateway],
                                error: (String, String) -> Void, warning: (String, String) -> Void) -> [ForeignGateway] {
        let known = Set(gateways.map(\.id))
        var out: [ForeignGateway] = []
        var gatewaySeen: [String: Int] = [:]
        var roomSeen: [String: Int] = [:]
        var topicSeen: [String: Int] = [:]
        for (i, e) in entries.enumerated() {
            let path = "foreign_gateways[\(i)]"
            guard let gateway = e.gateway else {
                error("\(path).gateway", "missing; name the gateway of `gateways:` this receiver stands for, e.g. `gateway: gw-lobby`")
                continue
            }
            var ok = true
            if !known.contains(gateway) {
                error("\(path).gateway", "unknown gateway '\(gateway)'; add it to `gateways:` (with its position) or use one of: \(gateways.map(\.id).joined(separator: ", "))")
                ok = false
            }
            if let first = gatewaySeen[gateway] {
                error("\(path).gateway", "gateway '\(gateway)' is already fed by foreign_gateways[\(first)]; one receiver per gateway (add a gateway for the second receiver)")
                ok = false
            }
            gatewaySeen[gateway] = i
            let source: ForeignGateway.Source
            switch (e.espresense, e.theengs) {
            case (let room?, nil):
                if !ForeignGateway.isTopicLevel(room) {
                    error("\(path).espresense", "'\(room)' is not an ESPresense room name as it appears in its topics: 1–64 characters without '/', '+', '#' or control characters (see `mosquitto_sub -t 'espresense/rooms/+/status' -v`)")
                    ok = false
                } else if room != room.lowercased() || room.contains(" ") {
                    warning("\(path).espresense", "ESPresense publishes its room as a slug (lower case, no spaces); '\(room)' will not match its topics unless the node really uses it — check with `mosquitto_sub -t 'espresense/rooms/+/status' -v`")
                }
                if let first = roomSeen[room] {
                    error("\(path).espresense", "room '\(room)' is already mapped by foreign_gateways[\(first)]; each ESPresense node is one gateway")
                    ok = false
                }
                roomSeen[room] = i
                source = .espresense(room: room)
            case (nil, let topic?):
                if !ForeignGateway.isTopicName(topic) {
                    error("\(path).theengs", "'\(topic)' is not a topic the gateway publishes under; write its publish topic without wildcards or a trailing '/', e.g. home/TheengsGateway/BTtoMQTT")
                    ok = false
                }
                if let first = topicSeen[topic] {
                    error("\(path).theengs", "topic '\(topic)' is already mapped by foreign_gateways[\(first)]; give each Theengs/OpenMQTTGateway receiver its own publish topic")
                    ok = false
                }
                topicSeen[topic] = i
                source = .theengs(topic: topic)
            case (nil, nil):
                error(path, "no receiver; add `espresense: <room>` for an ESPresense node or `theengs: <publish topic>` for a Theengs Gateway / OpenMQTTGateway")
                continue
            case (.some, .some):
                error(path, "both `espresense` and `theengs`; one entry is one receiver — split it into two entries with two gateways")
                continue
            }
            if let status = e.statusTopic, !ForeignGateway.isTopicName(status) {
                error("\(path).status_topic", "'\(status)' is not a topic name; write the receiver's last-will topic without wildcards, e.g. home/TheengsGateway/LWT")
                ok = false
            }
            if case .theengs(let topic) = source, e.statusTopic == nil, !topic.hasSuffix("/BTtoMQTT") {
                warning("\(path).status_topic", "not set, and '\(topic)' does not end in /BTtoMQTT, so the receiver's last will cannot be guessed; its gateway counts as online while messages arrive — set `status_topic:` to its LWT topic")
            }
            if ok { out.append(ForeignGateway(gateway: gateway, source: source, explicitStatusTopic: e.statusTopic)) }
        }
        return out
    }
}
