extension SiteDocument {
    /// One entry of `foreign_gateways:`: `{gateway: gw-lobby, espresense: lobby}` or
    /// `{gateway: gw-hall, theengs: home/TheengsGateway/BTtoMQTT, status_topic: …}`.
    public struct ForeignGatewayEntry: Decodable, Sendable {
        public var gateway: String?
        public var espresense: String?
        public var theengs: String?
        public var statusTopic: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case gateway, espresense, theengs
            case statusTopic = "status_topic"
        }
    }
}
