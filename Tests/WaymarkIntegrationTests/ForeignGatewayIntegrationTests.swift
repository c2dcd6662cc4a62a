import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkMQTT
import WaymarkPostgres

/// `waymark bridge` against the real broker and a real aggregator writing to the real PostgreSQL:
/// a sequence of ESPresense messages and one of Theengs/OpenMQTTGateway messages, fed through the
/// broker at their own pace, become the regions and visits of the device that walked past the
/// receivers — and nothing about the devices the site does not track.
@Suite("Foreign gateways (waymark bridge)", .enabled(if: AggregatorTestServices.shouldRun))
struct ForeignGatewayIntegrationTests {
    static let device = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7"

    static func site(_ id: String, rooms: [String], receivers: [String]) -> String {
        var y = "site: \(id)\ngateways:\n"
        for (i, r) in rooms.enumerated() { y += "  - { id: gw-\(r), position: [\(Double(i) * 8), 0.0] }\n" }
        y += "regions:\n"
        for r in rooms { y += "  - { id: \(r), name: \(r.capitalized), gateways: [gw-\(r)] }\n" }
        y += "edges:\n"
        for i in 1..<rooms.count { y += "  - [\(rooms[i - 1]), \(rooms[i])]\n" }
        y += """
        tracking:
          ibeacon_uuids: ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"]
        fusion:
          exit_delay_s: 10
        foreign_gateways:

        """
        for (r, receiver) in zip(rooms, receivers) { y += "  - { gateway: gw-\(r), \(receiver) }\n" }
        return y
    }

    @Test("a device walking three ESPresense rooms: its visits in order, the rejects counted, nothing else stored")
    func espresense() throws {
        let tag = "esp\(UInt32.random(in: 0...UInt32.max))"
        let rooms = ["hallway", "kitchen", "living"]
        let capture = try ForeignCapture("espresense-walk.jsonl", prefixes: [("espresense/", "\(tag)/")])
        let run = try ForeignRun(siteYAML: Self.site(tag, rooms: rooms, receivers: rooms.map { "espresense: \($0)" }),
                                 bridgeArguments: ["--set", "espresense.prefix=\(tag)"])
        defer { run.finish() }
        try run.play(capture)
        let visits = try run.waitForVisits(3)
        #expect(visits.map(\.region) == rooms, "\(visits)")
        for v in visits {
            #expect(v.device == Self.device)
            #expect(!v.inferred)
            #expect(v.dwell > 8 && v.dwell < 26, "\(v.region): \(v.dwell) s; the device stayed 16 s")
        }
        let metrics = try run.metrics()
        #expect(HTTPGet.sample(metrics, #"waymark_bridge_rejected_total{reason="malformed"}"#) == 1, "\(metrics)")
        #expect(HTTPGet.sample(metrics, #"waymark_bridge_rejected_total{reason="retained"}"#) == 1, "\(run.bridge?.output ?? "")")
        #expect((HTTPGet.sample(metrics, #"waymark_bridge_filtered_total{reason="not_unique"}"#) ?? 0) >= 5)
        #expect(HTTPGet.sample(metrics, #"waymark_bridge_filtered_total{reason="untracked"}"#) == 1)
        #expect(try run.storedDevices() == [Self.device], "only the tracked device reaches the database")
        try run.expectGatewaysOfflineAfterStop(rooms.map { "gw-\($0)" })
    }

    @Test("a device walking past two OpenMQTTGateways and a Theengs Gateway: its visits in order")
    func theengs() throws {
        let tag = "th\(UInt32.random(in: 0...UInt32.max))"
        let rooms = ["entrance", "counter", "shop"]
        let capture = try ForeignCapture("theengs-walk.jsonl", prefixes: [("home/", "\(tag)/")])
        let topics = ["\(tag)/OMG_ESP32_BLE_entrance/BTtoMQTT", "\(tag)/TheengsGateway/BTtoMQTT", "\(tag)/OMG_ESP32_BLE_shop/BTtoMQTT"]
        let run = try ForeignRun(siteYAML: Self.site(tag, rooms: rooms, receivers: topics.map { "theengs: \($0)" }), bridgeArguments: [])
        defer { run.finish() }
        try run.play(capture)
        let visits = try run.waitForVisits(3)
        #expect(visits.map(\.region) == rooms, "\(visits)")
        for v in visits {
            #expect(v.device == Self.device)
            #expect(v.dwell > 8 && v.dwell < 26, "\(v.region): \(v.dwell) s; the device stayed 16 s")
        }
        let metrics = try run.metrics()
        #expect(HTTPGet.sample(metrics, #"waymark_bridge_rejected_total{reason="implausible_rssi"}"#) == 1, "\(metrics)")
        #expect((HTTPGet.sample(metrics, #"waymark_bridge_filtered_total{reason="untracked"}"#) ?? 0) >= 5)
        #expect(try run.storedDevices() == [Self.device])
        try run.expectGatewaysOfflineAfterStop(rooms.map { "gw-\($0)" })
    }
}

/// One test's aggregator (in this process), database and `waymark bridge` process.
final class ForeignRun {
    struct Visit: CustomStringConvertible {
        var device: String
        var region: String
        var dwell: Double
        var inferred: Bool
        var description: String { "\(region) \(Int(dwell)) s\(inferred ? " (inferred)" : "")" }
    }

    let db: PostgresTestDatabase
    let site: Site
    let sitePath: String
    let mqtt: String
    let aggregator: AggregatorTestRun
    let client: MQTTClient
    let bridgeArguments: [String]
    var bridge: WaymarkServiceProcess?
    private var stopped = false

    init(siteYAML: String, bridgeArguments: [String]) throws {
        mqtt = try AggregatorTestServices.requireMQTT()
        db = try PostgresTestDatabase("foreign")
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        sitePath = try aggregatorTempFile("site.yaml", siteYAML)
        site = try SiteLoader.load(path: sitePath).site
        aggregator = AggregatorTestRun(config: AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: db.url,
                                                                        clientID: "agg-\(site.id)"), site: site)
        client = try MQTTClient(.init(clientID: "receivers-\(site.id)"))
        try client.connect(try MQTTConnection(url: mqtt))
        try client.waitUntilConnected(timeout: 10)
        self.bridgeArguments = bridgeArguments
        try #require(aggregator.waitUntilReady())
    }

    /// The retained messages first (the broker's state before the bridge starts), then the bridge,
    /// then the readings at their pace.
    func play(_ capture: ForeignCapture) throws {
        try ForeignCapture.play(capture.retained.map { var l = $0; l.dt = 0; return l }, client: client)
        // The retained messages are on the broker before the bridge subscribes (else it would get
        // them as live messages, without the retain flag).
        for level in Set(capture.retained.map { $0.topic.prefix { $0 != "/" } }) {
            let expected = capture.retained.filter { $0.topic.hasPrefix(level + "/") }.count
            let reader = try RetainedReader(url: mqtt, pattern: "\(level)/#", expected: expected)
            defer { reader.close() }
            try #require(reader.payloads.count == expected, "the broker holds \(reader.payloads.count) of \(expected) retained messages under \(level)/")
        }
        let bridge = try WaymarkServiceProcess(["bridge", "--site", sitePath, "--broker", mqtt, "--metrics-port", String(try LocalPort.free()),
                                                "--set", "status.interval_s=1"] + bridgeArguments, name: "bridge")
        self.bridge = bridge
        try #require(bridge.waitForLog("connected to the broker"), "the bridge did not connect:\n\(bridge.output)")
        Thread.sleep(forTimeInterval: 1)  // subscriptions, and the gateways' first statuses
        try ForeignCapture.play(capture.live, client: client)
    }

    /// The device's visits once `count` have ended (the last one `exit_delay_s` after the device
    /// was last heard), ordered by entry.
    func waitForVisits(_ count: Int, timeout: Double = 60) throws -> [ForeignRun.Visit] {
        let conn = try db.connect()
        let deadline = Date().addingTimeInterval(timeout)
        var visits: [Visit] = []
        while Date() < deadline {
            visits = try conn.query("""
                SELECT device_id, region_id, dwell_s, inferred FROM visits WHERE site_id = $1 ORDER BY entered_at
                """, [site.id]).rows.map { try Visit(device: $0.string(0), region: $0.string(1), dwell: $0.double(2), inferred: $0.bool(3)) }
            if visits.count >= count { return visits }
            Thread.sleep(forTimeInterval: 0.5)
        }
        Issue.record("only \(visits.count) visits after \(timeout) s: \(visits)\nbridge log:\n\(bridge?.output ?? "")")
        return visits
    }

    func metrics() throws -> String {
        let port = try #require(bridge?.metricsPort, "no metrics port in the bridge's log:\n\(bridge?.output ?? "")")
        return try HTTPGet.text(port: port)
    }

    func storedDevices() throws -> [String] {
        try db.connect().query("SELECT device_id FROM devices ORDER BY device_id").rows.map { try $0.string(0) }
    }

    /// SIGTERM ends the bridge cleanly, and each bridged gateway's retained status says offline.
    func expectGatewaysOfflineAfterStop(_ gateways: [String]) throws {
        let status = bridge?.stop()
        #expect(status == 0, "waymark bridge exit status \(String(describing: status)):\n\(bridge?.output ?? "")")
        stopped = true
        let reader = try RetainedReader(url: mqtt, pattern: "waymark/v1/\(site.id)/gateways/+/status", expected: gateways.count)
        defer { reader.close() }
        for g in gateways {
            let payload = try #require(reader.payloads["waymark/v1/\(site.id)/gateways/\(g)/status"])
            let s = try JSONDecoder().decode(GatewayStatus.self, from: Data(payload))
            #expect(s.state == .offline && s.gateway == g)
        }
    }

    func finish() {
        if !stopped { _ = bridge?.stop() }
        _ = aggregator.stop()
        client.close()
        db.drop()
    }
}
