/// One message received on a subscription (copied out of libmosquitto's buffer).
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool
    /// The packet id (0 for QoS 0).
    public var messageID: Int32

    public init(topic: String, payload: [UInt8], qos: Int, retain: Bool, messageID: Int32 = 0) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.messageID = messageID
    }
}

/// Events delivered by ``MQTTClient``'s handlers, all on libmosquitto's network thread.
public enum MQTTEvent: Sendable {
    /// CONNACK accepted (also after every automatic reconnect).
    case connected
    /// CONNACK refused; the client keeps retrying with backoff unless you close it.
    case refused(MQTTError)
    /// The connection ended. `expected` is true after ``MQTTClient/disconnect()``/``MQTTClient/close()``;
    /// otherwise the client reconnects by itself.
    case disconnected(expected: Bool, reason: String)
}
