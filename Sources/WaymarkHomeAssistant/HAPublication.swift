/// One MQTT message the Home Assistant output sends.
public struct HAPublication: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool

    public init(topic: String, payload: [UInt8], retain: Bool = true) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }

    /// An empty retained message: removes a discovered entity, or clears a retained state.
    public static func removal(_ topic: String) -> HAPublication { .init(topic: topic, payload: [], retain: true) }
}
