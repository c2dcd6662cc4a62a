/// A Bluetooth receiver of another project that `waymark bridge` makes one of the site's gateways
/// (the site file's `foreign_gateways:` section, docs/foreign-gateways.md): an ESPresense node or a
/// Theengs Gateway / OpenMQTTGateway. Built only by `SiteValidator`, so `gateway` names a gateway
/// of the site and every topic is a valid MQTT topic name.
public struct ForeignGateway: Hashable, Sendable {
    /// Where the receiver's readings come from.
    public enum Source: Hashable, Sendable {
        /// An ESPresense node, by its room name as it appears in `espresense/devices/<id>/<room>`.
        case espresense(room: String)
        /// A Theengs Gateway or OpenMQTTGateway, by the topic it publishes BLE messages under
        /// (`home/TheengsGateway/BTtoMQTT`); each message arrives on `<topic>/<address>`.
        case theengs(topic: String)
    }

    /// The site gateway the receiver stands for.
    public var gateway: String
    public var source: Source
    /// The topic on which the receiver announces `online` / `offline` (its MQTT last will), when
    /// the site file sets one; nil means the default of ``statusTopic(espresensePrefix:)``.
    public var explicitStatusTopic: String?

    public init(gateway: String, source: Source, explicitStatusTopic: String? = nil) {
        self.gateway = gateway
        self.source = source
        self.explicitStatusTopic = explicitStatusTopic
    }

    /// The receiver's own online/offline topic: the site file's `status_topic`, else
    /// `<prefix>/rooms/<room>/status` for ESPresense (its retained last will), else for Theengs /
    /// OpenMQTTGateway the topic's parent with `/LWT` (`home/TheengsGateway/BTtoMQTT` →
    /// `home/TheengsGateway/LWT`). Nil for a Theengs topic that does not end in `/BTtoMQTT` and
    /// has no `status_topic`: the receiver's liveness is then judged by its messages alone.
    public func statusTopic(espresensePrefix: String) -> String? {
        if let explicitStatusTopic { return explicitStatusTopic }
        switch source {
        case .espresense(let room):
            return "\(espresensePrefix)/rooms/\(room)/status"
        case .theengs(let topic):
            guard topic.hasSuffix("/BTtoMQTT") else { return nil }
            return String(topic.dropLast("/BTtoMQTT".count)) + "/LWT"
        }
    }

    /// Whether `text` may be used as an MQTT topic name here: 1–256 bytes of UTF-8, no wildcard
    /// (`+`, `#`), no empty level, no control character.
    public static func isTopicName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 256 else { return false }
        guard !text.hasPrefix("/"), !text.hasSuffix("/"), !text.contains("//") else { return false }
        return !text.utf8.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") || $0 < 0x20 || $0 == 0x7F }
    }

    /// Whether `text` may be one topic level: a topic name without `/`, at most 64 bytes.
    public static func isTopicLevel(_ text: String) -> Bool {
        isTopicName(text) && !text.contains("/") && text.utf8.count <= 64
    }
}
