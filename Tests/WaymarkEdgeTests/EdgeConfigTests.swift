import Testing
import WaymarkMQTT
import WaymarkService
@testable import WaymarkEdge

@Suite struct EdgeConfigTests {
    func load(flags: [String: String] = [:], env: [String: String] = [:], file: String? = nil) throws -> EdgeConfig {
        var path: String?
        if let file {
            path = EdgeTestData.temporaryDirectory("config") + "/edge.yaml"
            try file.write(toFile: path!, atomically: true, encoding: .utf8)
        }
        return try EdgeConfig.load(ConfigLayers(filePath: path, envPrefix: "WAYMARK_EDGE", flags: flags, environment: env,
                                                knownKeys: EdgeConfig.keys))
    }

    @Test("flags override the environment, which overrides the file; defaults fill the rest")
    func layering() throws {
        let c = try load(flags: ["window_s": "2"], env: ["WAYMARK_EDGE_WINDOW_S": "3", "WAYMARK_EDGE_MQTT_URL": "mqtt://env:1884"],
                         file: "site: s.yaml\ngateway: gw1\nwindow_s: 4\nmqtt: {url: 'mqtt://file:1885', username: gw1, password: hunter2}\nspool:\n  max_bytes: 8192\n")
        #expect(c.windowS == 2)
        #expect(c.mqtt.url == "mqtt://env:1884")
        #expect(c.mqtt.password == "hunter2")
        #expect(c.spoolMaxBytes == 8192)
        #expect(c.source == .adapter("hci0"))
        #expect(c.clientID == "waymark-edge-gw1")
        #expect(c.spoolResendAfterS == 30)
    }

    @Test("a window longer than 2 s is allowed, with advice that names its cost; the default has none")
    func windowAdvice() throws {
        #expect(try load(flags: ["site": "s", "gateway": "g"]).advice.isEmpty)
        #expect(try load(flags: ["site": "s", "gateway": "g", "window_s": "2"]).advice.isEmpty)
        let long = try load(flags: ["site": "s", "gateway": "g", "window_s": "5"])
        #expect(long.windowS == 5)
        #expect(long.advice.count == 1)
        #expect(long.advice.first?.contains("window_s is 5.0 s") == true)
        #expect(long.advice.first?.contains("docs/edge.md") == true)
    }

    @Test("secrets are masked when the configuration is described")
    func secrets() throws {
        let layers = try ConfigLayers(filePath: nil, envPrefix: "WAYMARK_EDGE",
                                      flags: ["site": "s", "gateway": "g", "mqtt.password": "hunter2", "pseudonym_secret": "pepper"],
                                      environment: [:], knownKeys: EdgeConfig.keys)
        let text = layers.describe(secretKeys: EdgeConfig.secretKeys).joined(separator: "\n")
        #expect(!text.contains("hunter2") && !text.contains("pepper"))
        #expect(text.contains("mqtt.password = ***"))
    }

    @Test("errors name the key, where it was set and the accepted values")
    func errors() throws {
        #expect(throws: ConfigLayers.ConfigError.self) { try load(flags: ["gateway": "g"]) }
        let window = #expect(throws: ConfigLayers.ConfigError.self) { try load(flags: ["site": "s", "gateway": "g", "window_s": "0"]) }
        #expect(window?.description.contains("--window-s") == true)
        let scan = #expect(throws: ConfigLayers.ConfigError.self) {
            try load(flags: ["site": "s", "gateway": "g"], env: ["WAYMARK_EDGE_SCAN_WINDOW_MS": "200"])
        }
        #expect(scan?.description.contains("WAYMARK_EDGE_SCAN_WINDOW_MS") == true)
        let url = #expect(throws: ConfigLayers.ConfigError.self) { try load(flags: ["site": "s", "gateway": "g", "mqtt.url": "http://x"]) }
        #expect(url?.description.contains("mqtt://") == true)
        let lonePassword = #expect(throws: ConfigLayers.ConfigError.self) {
            try load(flags: ["site": "s", "gateway": "g", "mqtt.password": "hunter2"])
        }
        #expect(lonePassword?.description.contains("mqtt.username") == true)
        #expect(lonePassword?.description.contains("hunter2") == false)
        let unknown = #expect(throws: ConfigLayers.ConfigError.self) { try load(file: "site: s\ngateway: g\nspool: {max_byte: 1}\n") }
        #expect(unknown?.description.contains("spool.max_byte") == true)
    }

    @Test("sources: adapter name, adapter address, replay file")
    func sources() throws {
        #expect(try EdgeConfig.parseSource("hci1") == .adapter("hci1"))
        #expect(try EdgeConfig.parseSource("hci:aa:bb:cc:dd:ee:ff") == .adapterAddress("AA:BB:CC:DD:EE:FF"))
        #expect(try EdgeConfig.parseSource("replay:/tmp/x.txt") == .replay(path: "/tmp/x.txt"))
        #expect(throws: ConfigLayers.ConfigError.self) { try EdgeConfig.parseSource("usb0") }
        #expect(throws: ConfigLayers.ConfigError.self) { try EdgeConfig.parseSource("hci:zz") }
    }

    @Test("broker URLs: schemes, default ports, credentials, IPv6; the password is never printed")
    func brokerURLs() throws {
        let plain = try MQTTConnection(url: "mqtt://broker.local")
        #expect(plain.host == "broker.local" && plain.port == 1883 && plain.tls == nil)
        let secure = try MQTTConnection(url: "mqtts://gw1:s%40cret@broker.local:8884/")
        #expect(secure.port == 8884 && secure.tls != nil && secure.username == "gw1" && secure.password == "s@cret")
        #expect(secure.description == "mqtts://gw1@broker.local:8884")
        let v6 = try MQTTConnection(url: "mqtt://[::1]:1999")
        #expect(v6.host == "::1" && v6.port == 1999)
        let bad = #expect(throws: MQTTError.self) { try MQTTConnection(url: "mqtt://u:pw@host:99999") }
        #expect(bad?.description.contains("pw") == false)
        #expect(throws: MQTTError.self) { try MQTTConnection(url: "tcp://host") }
        // TLS from the config: a CA file switches to mqtts defaults.
        var c = EdgeConfig(sitePath: "s", gateway: "g")
        c.mqtt.url = "mqtt://broker"
        c.mqtt.caFile = "/etc/ssl/ca.pem"
        let conn = try c.connection()
        #expect(conn.tls?.caFile == "/etc/ssl/ca.pem" && conn.port == 8883)
    }
}
