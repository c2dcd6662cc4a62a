import WaymarkMQTT

extension MQTTSettings {
    /// Reads the `mqtt.*` keys over `defaults`, checking every value; errors name the key, where
    /// it was set, and what is accepted. The URL is parsed here, so a bad one stops the service at
    /// start with a message rather than at its first connection.
    public static func load(_ layers: ConfigLayers, defaults: MQTTSettings = .init()) throws -> MQTTSettings {
        func check(_ ok: Bool, _ key: String, _ why: String) throws {
            guard ok else {
                let at = layers.raw(key).map { layers.where_(key, $0.source) } ?? key
                throw ConfigLayers.ConfigError("\(at): \(why)")
            }
        }
        var m = defaults
        m.url = layers.string("mqtt.url", default: m.url)
        m.clientID = layers.optionalString("mqtt.client_id") ?? m.clientID
        m.username = layers.optionalString("mqtt.username") ?? m.username
        m.password = layers.optionalString("mqtt.password") ?? m.password
        m.caFile = layers.optionalString("mqtt.ca_file") ?? m.caFile
        m.certFile = layers.optionalString("mqtt.cert_file") ?? m.certFile
        m.keyFile = layers.optionalString("mqtt.key_file") ?? m.keyFile
        m.keepaliveS = try layers.int("mqtt.keepalive_s", default: m.keepaliveS)
        try check((5...3600).contains(m.keepaliveS), "mqtt.keepalive_s", "must be 5 … 3600 seconds")
        m.maxInflight = try layers.int("mqtt.max_inflight", default: m.maxInflight)
        try check((1...65535).contains(m.maxInflight), "mqtt.max_inflight", "must be 1 … 65535")
        m.reconnectMinS = try layers.int("mqtt.reconnect_min_s", default: m.reconnectMinS)
        m.reconnectMaxS = try layers.int("mqtt.reconnect_max_s", default: m.reconnectMaxS)
        try check(m.reconnectMinS >= 1 && m.reconnectMaxS >= m.reconnectMinS, "mqtt.reconnect_max_s",
                  "reconnect_min_s must be ≥ 1 and reconnect_max_s ≥ reconnect_min_s")
        try check(m.keyFile == nil || m.certFile != nil, "mqtt.key_file", "needs mqtt.cert_file (the client certificate it belongs to)")
        let connection: MQTTConnection
        do { connection = try m.connection() } catch { throw ConfigLayers.ConfigError("mqtt.url: \(error)") }
        if connection.password != nil && connection.username == nil {
            throw ConfigLayers.ConfigError("mqtt.password is set but mqtt.username is not: set both (or put user:password@ in mqtt.url)")
        }
        return m
    }
}
