import Foundation
import Testing

/// The real `waymark-edge` program against the broker configuration from deploy/mosquitto/: it
/// logs in with its own account over TLS, and its batches and status reach the aggregator account
/// without a single denied publish; with another gateway's id it gets nothing through.
@Suite("Deploy: waymark-edge with the deploy broker", .serialized, .enabled(if: DeployEnvironment.brokerSuiteRuns))
struct DeployEdgeTests {
    /// The `waymark-edge` built next to this test bundle (`swift test` builds every product).
    static func edgeBinary() throws -> String {
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var dir = URL(fileURLWithPath: me).deletingLastPathComponent()
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        let edge = dir.appendingPathComponent("waymark-edge").path
        try #require(FileManager.default.isExecutableFile(atPath: edge), "\(edge) is missing: build it with `swift build --product waymark-edge`")
        return edge
    }

    /// A replay file: a tracked device heard by gw-a for 3 s, an untracked one, and a line of gw-b.
    static func replayFile(in dir: URL) throws -> URL {
        let start = Date().timeIntervalSince1970 - 10
        var lines: [String] = []
        for i in 0..<7 {
            let t = start + Double(i) * 0.5
            lines.append(#"{"t":\#(t),"gateway":"gw-a","device":"mac:e7-8f-13-56-24-ce","rssi":\#(-60 - i)}"#)
            lines.append(#"{"t":\#(t),"gateway":"gw-a","device":"mac:00-11-22-33-44-55","rssi":-70}"#)
        }
        lines.append(#"{"t":\#(start),"gateway":"gw-b","device":"mac:e7-8f-13-56-24-ce","rssi":-50}"#)
        let url = dir.appendingPathComponent("replay.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// The real agent as `gateway`, logged in over TLS as `account`, replaying `replay` (default:
    /// `replayFile`) as fast as it can and exiting when done.
    static func runEdge(_ broker: DeployBroker, gateway: String, account: String, replay: URL? = nil,
                        timeout: TimeInterval) throws -> DeployCommandResult {
        let replay = try replay ?? Self.replayFile(in: broker.directory)
        return try DeployCommand.run(try Self.edgeBinary(), [
            "--site", broker.siteURL.path, "--gateway", gateway, "--source", "replay:\(replay.path)", "--rate", "0",
            "--broker", "mqtts://127.0.0.1:\(broker.tlsPort)", "--spool-dir", broker.directory.appendingPathComponent("spool-\(gateway)").path,
            "--metrics-port", "0", "--exit-when-done",
            "--set", "mqtt.username=\(account)", "--set", "mqtt.password=\(try broker.password(account))",
            "--set", "mqtt.ca_file=\(broker.certificates.appendingPathComponent("ca.crt").path)",
        ], timeout: timeout)
    }

    @Test("a gateway's batches and status arrive over TLS with its own account, nothing denied")
    func edgePublishesOverTLS() throws {
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let p = broker.prefix
        let topics = ["\(p)/gateways/+/sightings", "\(p)/gateways/+/status"]
        try broker.openSession(broker.connection(DeployBroker.aggregatorUser), clientID: "agg", topics: topics)

        let edge = try Self.runEdge(broker, gateway: "gw-a", account: DeployBroker.gatewayUser("gw-a"), timeout: 60)
        #expect(edge.status == 0 && !edge.timedOut, "\(edge)")

        let received = try broker.collect(broker.connection(DeployBroker.aggregatorUser), clientID: "agg", topics: topics, skipRetained: true)
        let batches = received.filter { $0.hasPrefix("\(p)/gateways/gw-a/sightings ") }
        #expect(!batches.isEmpty, "no batch from gw-a: \(received)")
        #expect(received.allSatisfy { $0.hasPrefix("\(p)/gateways/gw-a/") }, "\(received)")
        #expect(received.contains { $0.hasPrefix("\(p)/gateways/gw-a/status ") && $0.contains(#""online""#) }, "\(received)")
        var counted = 0
        for line in batches {
            let payload = Data(line.dropFirst("\(p)/gateways/gw-a/sightings ".count).utf8)
            let batch = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any], "\(line)")
            #expect(batch["gateway"] as? String == "gw-a")
            for entry in batch["sightings"] as? [[String: Any]] ?? [] {
                #expect(entry["device"] as? String == "mac:e7-8f-13-56-24-ce", "only the tracked device leaves the gateway")
                counted += entry["count"] as? Int ?? 0
            }
        }
        #expect(counted == 7, "every advert of the tracked device, once: \(received)")
        #expect(!broker.log.contains("Denied"), "the edge agent used a topic outside its ACL:\n\(broker.log)")
    }

    @Test("an agent posing as another gateway gets nothing through")
    func edgeCannotPoseAsAnotherGateway() throws {
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let p = broker.prefix
        let topics = ["\(p)/gateways/+/sightings", "\(p)/gateways/+/status"]
        try broker.openSession(broker.connection(DeployBroker.aggregatorUser), clientID: "agg", topics: topics)

        // gw-a's credentials, gw-b's identity: its last will on gw-b/status is refused at connect,
        // or its publishes are dropped; either way it keeps retrying until the time limit.
        _ = try Self.runEdge(broker, gateway: "gw-b", account: DeployBroker.gatewayUser("gw-a"), timeout: 6)

        #expect(try broker.collect(broker.connection(DeployBroker.aggregatorUser), clientID: "agg", topics: topics) == [])
        #expect(broker.log.contains("Denied") || broker.log.contains("not authorised"), "\(broker.log)")
    }
}
