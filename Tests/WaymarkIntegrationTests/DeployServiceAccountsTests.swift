import Foundation
import Testing

/// The accounts deploy/mosquitto/make-broker-config.sh makes for the aggregator's retained status
/// and for `waymark homeassistant` (docs/home-assistant.md), checked with a real Mosquitto: each may
/// retain exactly its own topics, and no one else may forge them.
@Suite("Deploy: the aggregator's status and the Home Assistant account", .serialized, .enabled(if: DeployEnvironment.brokerSuiteRuns))
struct DeployServiceAccountsTests {
    let aggregator = DeployBroker.aggregatorUser
    let reader = DeployBroker.readerUser
    let homeAssistant = "homeassistant@\(DeployBroker.site)"

    /// The retained messages under `pattern` that `user` may read, as "topic payload".
    private func retained(_ broker: DeployBroker, _ user: String, _ pattern: String) throws -> [String] {
        let r = try DeployCommand.run("mosquitto_sub", try broker.connection(user) + ["-t", pattern, "--retained-only", "-v", "-W", "1"])
        try #require(r.status == 0 || r.status == 27, "\(r)")
        return r.lines.sorted()
    }

    @Test("the aggregator retains its status (its last will's topic); a reader or the Home Assistant account cannot overwrite it")
    func aggregatorStatus() throws {
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let topic = "\(broker.prefix)/aggregator/status"
        try broker.publish(broker.connection(aggregator), topic: topic, "genuine-online", retain: true)
        try broker.publish(broker.connection(reader), topic: topic, "forged-by-reader", retain: true)
        try broker.publish(broker.connection(homeAssistant), topic: topic, "forged-by-ha", retain: true)
        // The reader (apps, dashboards) may read it: only the aggregator's.
        #expect(try retained(broker, reader, topic) == ["\(topic) genuine-online"])
        let denied = broker.log.split(separator: "\n").filter { $0.contains("Denied PUBLISH") }
        #expect(denied.count == 2 && denied.allSatisfy { $0.contains("'\(topic)'") }, "\(denied)")
        // With shards, an aggregator without shard 0 retains its own status below it, readable too.
        let shardTopic = "\(topic)/1-3"
        try broker.publish(broker.connection(aggregator), topic: shardTopic, "shards-online", retain: true)
        try broker.publish(broker.connection(reader), topic: shardTopic, "forged-by-reader", retain: true)
        #expect(try retained(broker, reader, shardTopic) == ["\(shardTopic) shards-online"])
        // `waymark homeassistant` reads every aggregator's status (its entities' availability follows them).
        #expect(try retained(broker, homeAssistant, "\(topic)/#").sorted() == ["\(topic) genuine-online", "\(shardTopic) shards-online"])
    }

    @Test("waymark homeassistant retains its site's discovery configurations and its states, nothing of the aggregator's or another node's")
    func homeAssistantAccount() throws {
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let p = broker.prefix
        let asHA = try broker.connection(homeAssistant)
        let config = "homeassistant/sensor/waymark_\(DeployBroker.site)/device_x_region/config"
        try broker.publish(asHA, topic: config, "config", retain: true)
        try broker.publish(asHA, topic: "\(p)/homeassistant/devices/x/state", "state", retain: true)
        try broker.publish(asHA, topic: "\(p)/homeassistant/status", "online", retain: true)
        // Not its topics: the aggregator's device state and another site's discovery node.
        try broker.publish(asHA, topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-ff/state", "forged-state", retain: true)
        try broker.publish(asHA, topic: "homeassistant/sensor/waymark_other/device_x_region/config", "other-node", retain: true)

        // The aggregator reads its own device topics: no forged state there.
        #expect(try retained(broker, aggregator, "\(p)/devices/#") == [])
        // The account reads back its own configurations (its clean-up at start needs that).
        #expect(try retained(broker, homeAssistant, "homeassistant/+/waymark_\(DeployBroker.site)/+/config") == ["\(config) config"])
        // The broker denied exactly the two foreign topics (mosquitto_pub cannot tell under MQTT
        // 3.1.1: a denied QoS 1 publish is acknowledged and dropped; the broker logs it).
        let denied = broker.log.split(separator: "\n").filter { $0.contains("Denied PUBLISH") }
        #expect(denied.count == 2, "\(denied)")
        #expect(denied.contains { $0.contains("'\(p)/devices/mac:aa-bb-cc-dd-ee-ff/state'") })
        #expect(denied.contains { $0.contains("'homeassistant/sensor/waymark_other/device_x_region/config'") })
    }
}
