import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkMQTT
import WaymarkPostgres

/// `waymark homeassistant` against the real broker: the discovery configurations it leaves
/// retained, what a device walking the demo venue looks like in Home Assistant, and the removal of
/// a device taken off the allow-list.
@Suite("Home Assistant (waymark homeassistant)", .enabled(if: AggregatorTestServices.shouldRun))
struct HomeAssistantIntegrationTests {
    static let alice = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7"
    static let bob = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:8"

    /// An example site file with its `site:` id replaced (each test its own topics).
    static func exampleSite(_ file: String, id: String) throws -> String {
        let text = try String(contentsOfFile: DeployEnvironment.repositoryRoot.appendingPathComponent("deploy/examples/\(file)").path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix("site:") ? "site: \(id)" : String($0) }
        return try aggregatorTempFile("site.yaml", lines.joined(separator: "\n"))
    }

    static func aggregatorState(_ device: String, region: String?) -> [UInt8] {
        let r = region.map { "\"\($0)\"" } ?? "null"
        let regions = region.map { #"[{"region":"\#($0)","state":"inside","proximity":"near","distance_m":1.6}]"# } ?? "[]"
        return Array(#"{"device":"\#(device)","current_region":\#(r),"confidence":0.9,"recorded_region":\#(r),"regions":\#(regions),"updated_at":1780300000}"#.utf8)
    }

    @Test("discovery configurations are retained and follow the schema; a device taken off the allow-list loses its entities and state")
    func discoveryAndRemoval() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let siteID = "ha\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try Self.exampleSite("demo-museum.yaml", id: siteID)
        let node = "waymark_\(siteID)"
        let publisher = try MQTTClient(.init(clientID: "agg-stand-in-\(siteID)"))
        defer { publisher.close() }
        try publisher.connect(try MQTTConnection(url: mqtt))
        try publisher.waitUntilConnected(timeout: 10)
        // What the aggregator would have left retained: Alice in Hall A, Bob in the lobby.
        try publisher.publish(topic: "waymark/v1/\(siteID)/devices/\(Self.alice)/state", payload: Self.aggregatorState(Self.alice, region: "hall-a"), qos: 1, retain: true)
        try publisher.publish(topic: "waymark/v1/\(siteID)/devices/\(Self.bob)/state", payload: Self.aggregatorState(Self.bob, region: "lobby"), qos: 1, retain: true)

        let common = ["homeassistant", "--site", sitePath, "--broker", mqtt, "--metrics-port", "0", "--set", "cleanup_wait_s=1"]
        let first = try WaymarkServiceProcess(common + ["--device", "\(Self.alice)=Alice's badge", "--device", Self.bob], name: "ha")
        // 2 devices + 3 regions + 3 gateways + the aggregator.
        let configs = try Self.retained("homeassistant/+/\(node)/+/config", mqtt: mqtt, count: 9)
        #expect(configs.count == 9, "\(configs.keys.sorted())\n\(first.output)")
        var uniqueIDs = Set<String>()
        for (topic, payload) in configs {
            let levels = topic.split(separator: "/").map(String.init)
            #expect(levels.count == 5 && ["sensor", "binary_sensor"].contains(levels[1]) && levels[4] == "config", "\(topic)")
            #expect(levels[3].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }, "\(topic)")
            let o = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any], "\(topic) is not a JSON object")
            let uid = try #require(o["unique_id"] as? String)
            #expect(uniqueIDs.insert(uid).inserted, "unique_id \(uid) twice")
            #expect(o["name"] is String && o["state_topic"] is String)
            let device = try #require(o["device"] as? [String: Any], "\(topic): no device block")
            #expect((device["identifiers"] as? [String])?.isEmpty == false)
            #expect((o["origin"] as? [String: Any])?["name"] as? String == "Waymark")
            if levels[3].hasPrefix("device_") || levels[3].hasPrefix("region_") {
                // A device's entity follows its own availability (its shard's aggregator), occupancy the site's.
                let own = levels[3].hasPrefix("region_") ? "waymark/v1/\(siteID)/homeassistant/availability"
                    : try #require(o["state_topic"] as? String).replacingOccurrences(of: "/state", with: "/availability")
                #expect(o["availability_mode"] as? String == "all")
                #expect((o["availability"] as? [[String: Any]])?.compactMap { $0["topic"] as? String }
                        == [own, "waymark/v1/\(siteID)/homeassistant/status"])
            }
            if levels[3].hasPrefix("region_") { #expect(o["state_class"] as? String == "measurement") }
            if levels[1] == "binary_sensor" { #expect(o["device_class"] as? String == "connectivity") }
        }
        let states = try Self.retained("waymark/v1/\(siteID)/homeassistant/devices/+/state", mqtt: mqtt, count: 2)
        let alice = try #require(states["waymark/v1/\(siteID)/homeassistant/devices/\(Self.alice)/state"])
        #expect((try JSONSerialization.jsonObject(with: Data(alice)) as? [String: Any])?["state"] as? String == "Hall A")
        let occupancy = try Self.retained("waymark/v1/\(siteID)/homeassistant/regions/+/occupancy", mqtt: mqtt, count: 3)
        #expect(occupancy.mapValues { String(decoding: $0, as: UTF8.self) } == [
            "waymark/v1/\(siteID)/homeassistant/regions/hall-a/occupancy": "1",
            "waymark/v1/\(siteID)/homeassistant/regions/lobby/occupancy": "1",
            "waymark/v1/\(siteID)/homeassistant/regions/entrance/occupancy": "0",
        ])
        #expect(first.stop() == 0, "\(first.output)")
        let status = try Self.retained("waymark/v1/\(siteID)/homeassistant/status", mqtt: mqtt, count: 1).values.first
        #expect(String(decoding: status ?? [], as: UTF8.self).contains(#""state":"offline""#), "a clean stop says offline")

        // Bob leaves the allow-list: his entity and his state go; Alice's stay.
        let second = try WaymarkServiceProcess(common + ["--device", "\(Self.alice)=Alice's badge"], name: "ha")
        #expect(second.waitForLog("removing entities no longer configured"), "\(second.output)")
        let bobConfig = "homeassistant/sensor/\(node)/device_ibeacon_3ae2c56db5-dffb-48d2-b060-d0f5a71096e0_3a1_3a8_region/config"
        var after: [String: [UInt8]] = [:]
        let deadline = Date().addingTimeInterval(15)
        repeat {
            Thread.sleep(forTimeInterval: 0.3)
            after = try Self.retained("homeassistant/+/\(node)/+/config", mqtt: mqtt, count: 8, timeout: 2)
        } while (after[bobConfig] != nil || after.count != 8) && Date() < deadline
        #expect(after[bobConfig] == nil, "Bob's configuration is still retained")
        #expect(after.count == 8)
        let statesAfter = try Self.retained("waymark/v1/\(siteID)/homeassistant/devices/+/state", mqtt: mqtt, count: 1)
        #expect(Array(statesAfter.keys) == ["waymark/v1/\(siteID)/homeassistant/devices/\(Self.alice)/state"])
        #expect(second.stop() == 0, "\(second.output)")
    }

    @Test("a simulated device walking the demo venue: its Home Assistant sensor follows it from region to region")
    func walkingDevice() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("ha_walk")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "hawalk\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try Self.exampleSite("museum.yaml", id: siteID)
        let site = try SiteLoader.load(path: sitePath).site
        let names = Dictionary(uniqueKeysWithValues: site.regions.map { ($0.id, $0.name) })
        let run = AggregatorTestRun(config: AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: db.url, clientID: "agg-\(siteID)"), site: site)
        var aggregatorStopped = false
        defer { if !aggregatorStopped { _ = run.stop() } }
        #expect(run.waitUntilReady())
        // The entities' availability: the aggregator's retained status, online while it runs.
        let aggregatorStatus = "waymark/v1/\(siteID)/aggregator/status"
        #expect(try Self.serviceState(aggregatorStatus, mqtt: mqtt) == "online")
        // The simulator's first device under the site's iBeacon UUID (major 1000, minor 1).
        let device = "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1000:1"
        let ha = try WaymarkServiceProcess(["homeassistant", "--site", sitePath, "--broker", mqtt, "--metrics-port", "0",
                                           "--set", "cleanup_wait_s=0.5", "--device", "\(device)=Visitor"], name: "ha-walk")
        defer { _ = ha.stop() }
        let watcher = try HAStateWatcher(url: mqtt, topic: "waymark/v1/\(siteID)/homeassistant/devices/\(device)/state")
        defer { watcher.close() }
        #expect(ha.waitForLog("connected to the broker"), "\(ha.output)")
        // The output follows the aggregator's status: the device's entity is available while it runs.
        let availability = "waymark/v1/\(siteID)/homeassistant/devices/\(device)/availability"
        #expect(try Self.waitForServiceState(availability, "online", mqtt: mqtt), "\(ha.output)")

        let dir = URL(fileURLWithPath: sitePath).deletingLastPathComponent().path
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let sim = try AggregatorProcesses.run([waymark, "simulate", "--site", sitePath, "--devices", "1", "--duration", "8m",
                                               "--seed", "4", "--arrivals", "start", "--truth", dir + "/truth.jsonl", "--quiet",
                                               "--publish", mqtt, "--speedup", "24", "--ack-wait", "60"])
        #expect(sim.status == 0, "waymark simulate --publish failed:\n\(sim.output)")
        Thread.sleep(forTimeInterval: 2)

        let truth = try String(contentsOfFile: dir + "/truth.jsonl", encoding: .utf8).split(separator: "\n").compactMap { line -> String? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["type"] as? String == "truth",
                  o["device"] as? String == device, let region = o["region"] as? String else { return nil }
            return names[region]
        }
        let shown = watcher.states
        let regionsShown = shown.filter { $0 != "not_home" }
        var changes: [String] = []
        for s in regionsShown where changes.last != s { changes.append(s) }
        #expect(Set(truth).count >= 3, "the simulated visitor should see several regions: \(truth)")
        #expect(Set(changes).count >= 3, "the sensor showed \(changes); the visitor walked \(truth)")
        #expect(shown.allSatisfy { $0 == "not_home" || names.values.contains($0) }, "every state is a region's name or not_home: \(shown)")
        let confirmed = Set(changes).intersection(truth)
        #expect(Double(confirmed.count) >= 0.7 * Double(Set(changes).count),
                "regions shown \(changes) but walked \(truth)")

        // The aggregator leaves: Home Assistant sees its entities unavailable.
        #expect(run.stop())
        aggregatorStopped = true
        #expect(try Self.serviceState(aggregatorStatus, mqtt: mqtt) == "offline")
        #expect(try Self.waitForServiceState(availability, "offline", mqtt: mqtt), "the device's entity stays available\n\(ha.output)")
    }

    /// Waits up to `timeout` seconds for the retained state on `topic` to be `expected`.
    static func waitForServiceState(_ topic: String, _ expected: String, mqtt: String, timeout: Double = 15) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try serviceState(topic, mqtt: mqtt) == expected { return true }
            Thread.sleep(forTimeInterval: 0.3)
        }
        return false
    }

    /// The `state` of a service's retained status (`online` / `offline`), nil when none is retained.
    static func serviceState(_ topic: String, mqtt: String) throws -> String? {
        guard let payload = try retained(topic, mqtt: mqtt, count: 1, timeout: 5)[topic] else { return nil }
        let o = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        return o?["state"] as? String
    }

    /// The retained messages under `pattern` once `count` have arrived (or after `timeout`).
    static func retained(_ pattern: String, mqtt: String, count: Int, timeout: Double = 15) throws -> [String: [UInt8]] {
        let reader = try RetainedReader(url: mqtt, pattern: pattern, expected: count, timeout: timeout)
        defer { reader.close() }
        Thread.sleep(forTimeInterval: 0.2)  // anything beyond `count`
        return reader.payloads.filter { !$0.value.isEmpty }
    }
}

/// Records the `state` of every message on a Home Assistant state topic.
final class HAStateWatcher: @unchecked Sendable {
    let client: MQTTClient
    private let lock = NSLock()
    private var received: [String] = []

    init(url: String, topic: String) throws {
        client = try MQTTClient(.init(clientID: "ha-watch-\(UInt32.random(in: 0...UInt32.max))"))
        client.onMessage = { [weak self] m in
            guard let self, let o = try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any],
                  let state = o["state"] as? String else { return }
            lock.lock(); received.append(state); lock.unlock()
        }
        try client.subscribe(topic, qos: 1)
        try client.connect(try MQTTConnection(url: url))
        try client.waitUntilConnected(timeout: 10)
    }

    var states: [String] { lock.lock(); defer { lock.unlock() }; return received }
    func close() { client.close() }
}
