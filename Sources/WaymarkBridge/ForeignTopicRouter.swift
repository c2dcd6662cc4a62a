import WaymarkCore

/// Maps the topics foreign receivers publish on to the site's `foreign_gateways` entries, and lists
/// what `waymark bridge` subscribes to.
public struct ForeignTopicRouter: Sendable {
    /// What a topic carries.
    public enum Route: Equatable, Sendable {
        /// An ESPresense reading for the receiver at `receiver` (an index into the site's
        /// `foreignGateways`); `id` is the topic's device level.
        case espresense(receiver: Int, id: String)
        /// A Theengs / OpenMQTTGateway reading; `level` is the topic's last level (the address).
        case theengs(receiver: Int, level: String)
        /// The receiver's own online/offline message (its last will).
        case status(receiver: Int)
        /// An ESPresense reading from a room no entry maps.
        case unmappedRoom(String)
        /// Anything else.
        case other
    }

    public let receivers: [ForeignGateway]
    public let espresensePrefix: String
    private var roomIndex: [String: Int] = [:]
    private var theengsIndex: [String: Int] = [:]
    private var statusIndex: [String: Int] = [:]

    public init(receivers: [ForeignGateway], espresensePrefix: String = "espresense") {
        self.receivers = receivers
        self.espresensePrefix = espresensePrefix
        for (i, r) in receivers.enumerated() {
            switch r.source {
            case .espresense(let room): roomIndex[room] = i
            case .theengs(let topic): theengsIndex[topic] = i
            }
            if let status = r.statusTopic(espresensePrefix: espresensePrefix) { statusIndex[status] = i }
        }
    }

    /// The subscription patterns: every ESPresense device topic (so that readings from unmapped
    /// rooms can be reported), each Theengs publish topic's children, and each status topic.
    public var subscriptions: [String] {
        var out: [String] = []
        if !roomIndex.isEmpty { out.append("\(espresensePrefix)/devices/+/+") }
        for r in receivers { if case .theengs(let topic) = r.source { out.append("\(topic)/+") } }
        for r in receivers { if let s = r.statusTopic(espresensePrefix: espresensePrefix) { out.append(s) } }
        return out
    }

    public func route(_ topic: String) -> Route {
        if let i = statusIndex[topic] { return .status(receiver: i) }
        guard let slash = topic.lastIndex(of: "/") else { return .other }
        let parent = String(topic[..<slash])
        let last = String(topic[topic.index(after: slash)...])
        if let i = theengsIndex[parent] { return .theengs(receiver: i, level: last) }
        let head = espresensePrefix + "/devices/"
        if topic.hasPrefix(head), parent.count > head.count {
            let id = String(parent.dropFirst(head.count))
            if let i = roomIndex[last] { return .espresense(receiver: i, id: id) }
            return .unmappedRoom(last)
        }
        return .other
    }
}
