/// The broker settings of a Waymark service: the `mqtt.*` keys that `waymark-edge` and
/// `waymark-aggregator` share (loaded by `MQTTSettings.load` in WaymarkService), and the
/// libmosquitto connection and client options they describe.
public struct MQTTSettings: Sendable, Equatable {
    /// `mqtt.url`: `mqtt://[user[:password]@]host[:port]` or `mqtts://…` (TLS, default port 8883).
    public var url = "mqtt://127.0.0.1:1883"
    /// `mqtt.client_id`: when nil, the service picks its own stable default.
    public var clientID: String?
    /// `mqtt.username` / `mqtt.password` (secret); they override credentials in the URL.
    public var username: String?
    public var password: String?
    /// `mqtt.ca_file`, `mqtt.cert_file`, `mqtt.key_file`: TLS (PEM). A CA or client certificate
    /// turns TLS on.
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    /// `mqtt.keepalive_s`.
    public var keepaliveS = 30
    /// `mqtt.max_inflight`: QoS 1 messages sent and not yet acknowledged by the broker at once.
    public var maxInflight = 20
    /// `mqtt.reconnect_min_s`, `mqtt.reconnect_max_s`: reconnect backoff (doubling).
    public var reconnectMinS = 1
    public var reconnectMaxS = 30

    public init() {}

    /// The keys above, for a service's list of known keys.
    public static let keys = [
        "mqtt.url", "mqtt.client_id", "mqtt.username", "mqtt.password", "mqtt.ca_file", "mqtt.cert_file",
        "mqtt.key_file", "mqtt.keepalive_s", "mqtt.max_inflight", "mqtt.reconnect_min_s", "mqtt.reconnect_max_s",
    ]
    /// Keys never printed or logged.
    public static let secretKeys: Set<String> = ["mqtt.password"]

    /// The broker connection: the URL, explicit credentials over the URL's, keepalive, and TLS
    /// when the URL says `mqtts://` or a CA/client certificate is given (`mqtt://host` without a
    /// port then means port 8883, the TLS port).
    public func connection() throws(MQTTError) -> MQTTConnection {
        var c = try MQTTConnection(url: url)
        c.keepalive = keepaliveS
        if let username { c.username = username }
        if let password { c.password = password }
        if caFile != nil || certFile != nil || c.tls != nil {
            c.tls = .init(caFile: caFile, certFile: certFile, keyFile: keyFile)
            if c.port == 1883, url.hasPrefix("mqtt://"), !Self.hasExplicitPort(url) { c.port = 8883 }
        }
        return c
    }

    /// libmosquitto client options with this client id and the configured in-flight window and
    /// reconnect backoff.
    public func clientOptions(clientID: String, cleanSession: Bool, maxQueued: Int) -> MQTTClient.Options {
        .init(clientID: clientID, cleanSession: cleanSession, maxInflight: maxInflight, maxQueued: maxQueued,
              reconnectDelay: reconnectMinS, reconnectDelayMax: reconnectMaxS, exponentialBackoff: true)
    }

    private static func hasExplicitPort(_ url: String) -> Bool {
        var rest = url.drop { $0 != "/" }.drop { $0 == "/" }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if let close = rest.lastIndex(of: "]") { rest = rest[rest.index(after: close)...] }
        return rest.contains(":")
    }
}
