import Testing
import WaymarkMQTT
import WaymarkService

/// The `mqtt.*` keys both services read through `MQTTSettings.load`.
@Suite("MQTT settings")
struct MQTTSettingsTests {
    func load(_ flags: [String: String]) throws -> MQTTSettings {
        try MQTTSettings.load(ConfigLayers(filePath: nil, envPrefix: "WAYMARK_TEST", flags: flags, environment: [:],
                                           knownKeys: MQTTSettings.keys))
    }

    @Test("defaults, then every key read and the connection built from them")
    func keys() throws {
        #expect(try load([:]) == MQTTSettings())
        let m = try load(["mqtt.url": "mqtt://broker:1999", "mqtt.client_id": "c1", "mqtt.username": "u", "mqtt.password": "p",
                          "mqtt.keepalive_s": "15", "mqtt.max_inflight": "7", "mqtt.reconnect_min_s": "2", "mqtt.reconnect_max_s": "9"])
        #expect(m.clientID == "c1" && m.keepaliveS == 15 && m.maxInflight == 7 && m.reconnectMinS == 2 && m.reconnectMaxS == 9)
        let c = try m.connection()
        #expect(c.host == "broker" && c.port == 1999 && c.username == "u" && c.password == "p" && c.keepalive == 15 && c.tls == nil)
        let options = m.clientOptions(clientID: "x", cleanSession: false, maxQueued: 0)
        #expect(options.maxInflight == 7 && options.reconnectDelay == 2 && options.reconnectDelayMax == 9 && !options.cleanSession)
    }

    @Test("a CA or client certificate turns TLS on; without a port that means 8883, an explicit port stays")
    func tls() throws {
        #expect(try load(["mqtt.url": "mqtt://broker", "mqtt.ca_file": "/ca.pem"]).connection().port == 8883)
        #expect(try load(["mqtt.url": "mqtt://user@broker", "mqtt.cert_file": "/c.pem", "mqtt.key_file": "/k.pem"]).connection().port == 8883)
        let explicit = try load(["mqtt.url": "mqtt://broker:1883", "mqtt.ca_file": "/ca.pem"]).connection()
        #expect(explicit.port == 1883 && explicit.tls?.caFile == "/ca.pem")
        #expect(try load(["mqtt.url": "mqtts://broker"]).connection().tls != nil)
    }

    @Test("bad values stop the service with the key and the fix")
    func errors() throws {
        let cases: [([String: String], String)] = [
            (["mqtt.url": "tcp://broker"], "mqtt.url"),
            (["mqtt.keepalive_s": "1"], "keepalive"),
            (["mqtt.max_inflight": "0"], "inflight"),
            (["mqtt.reconnect_min_s": "10", "mqtt.reconnect_max_s": "5"], "reconnect_max_s"),
            (["mqtt.password": "p"], "mqtt.username"),
            (["mqtt.key_file": "/k.pem"], "mqtt.cert_file"),
        ]
        for (flags, mention) in cases {
            let error = #expect(throws: ConfigLayers.ConfigError.self) { try load(flags) }
            #expect(error.map { "\($0)".contains(mention) } == true, "\(flags): \(String(describing: error))")
        }
    }
}
