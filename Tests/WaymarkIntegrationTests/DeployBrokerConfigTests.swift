import Foundation
import Testing

/// deploy/mosquitto/make-broker-config.sh as an operator meets it: bad site files get an error
/// naming the field, re-runs keep every existing password, several sites share one broker.
@Suite("Deploy: make-broker-config.sh", .enabled(if: DeployEnvironment.brokerSuiteRuns))
struct DeployBrokerConfigTests {
    let script = DeployEnvironment.script("deploy/mosquitto/make-broker-config.sh")

    private func write(_ text: String, in dir: URL, _ name: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("a gateway id that is not topic-safe is refused with the field and the fix")
    func badGatewayID() throws {
        try DeployEnvironment.requireTools(DeployEnvironment.brokerTools)
        let dir = try DeployEnvironment.temporaryDirectory("broker-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = try write("site: s1\ngateways:\n  - { id: 'gw/1', position: [0, 0] }\n", in: dir, "bad.yaml")
        let result = try DeployCommand.run(script, [site, dir.appendingPathComponent("out").path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("gateways[0].id: 'gw/1' is not a valid gateway id; use 1-64 letters, digits, '-', '_' or '.'"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/acl").path))
    }

    @Test("re-running after adding a gateway keeps the other passwords; two sites share one broker")
    func rerunKeepsPasswords() throws {
        try DeployEnvironment.requireTools(DeployEnvironment.brokerTools)
        let dir = try DeployEnvironment.temporaryDirectory("broker-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out")
        let secret = { (user: String) in try String(contentsOf: out.appendingPathComponent("secrets/\(user)"), encoding: .utf8) }

        let one = try write("site: s1\ngateways:\n  - { id: g1, position: [0, 0] }\n", in: dir, "s1.yaml")
        let first = try DeployCommand.run(script, [one, out.path])
        try #require(first.status == 0, "\(first)")
        let before = try secret("gw.g1@s1"), aggregatorBefore = try secret("aggregator@s1")

        let two = try write("site: s1\ngateways:\n  - { id: g1, position: [0, 0] }\n  - { id: g2, position: [5, 0] }\n", in: dir, "s1-more.yaml")
        let other = try write("site: s2\ngateways:\n  - { id: g1, position: [0, 0] }\nforeign_gateways:\n  - { gateway: g1, theengs: home/TheengsGateway/BTtoMQTT }\n",
                              in: dir, "s2.yaml")
        let second = try DeployCommand.run(script, [two, other, out.path])
        try #require(second.status == 0, "\(second)")
        #expect(try secret("gw.g1@s1") == before)
        #expect(try secret("aggregator@s1") == aggregatorBefore)
        #expect(try secret("gw.g2@s1") != before)

        let passwd = try String(contentsOf: out.appendingPathComponent("passwd"), encoding: .utf8)
        let users = passwd.split(separator: "\n").map { String($0.prefix { $0 != ":" }) }
        #expect(users == ["gw.g1@s1", "gw.g2@s1", "aggregator@s1", "reader@s1", "homeassistant@s1",
                          "gw.g1@s2", "aggregator@s2", "reader@s2", "homeassistant@s2", "bridge@s2"])
        #expect(!passwd.contains(before.trimmingCharacters(in: .newlines)), "passwd must hold hashes, not passwords")
        let acl = try String(contentsOf: out.appendingPathComponent("acl"), encoding: .utf8)
        #expect(acl.contains("user gw.g1@s2\ntopic write waymark/v1/s2/gateways/g1/sightings/#\n"))
        #expect(acl.contains("topic read waymark/v1/s2/gateways/g1/ack/#\n"), "a gateway's acks, each shard's too")
        #expect(acl.contains("user aggregator@s1\ntopic read waymark/v1/s1/gateways/+/sightings/#\n"))
        #expect(acl.contains("topic write waymark/v1/s1/gateways/+/ack/#\n"))
        #expect(acl.contains("topic write waymark/v1/s1/aggregator/status/#\n"), "the aggregator's status and last will (one per shard owner)")
        #expect(acl.contains("""
            user homeassistant@s1
            topic read waymark/v1/s1/devices/+/state
            topic read waymark/v1/s1/aggregator/status/#
            topic read homeassistant/status
            topic readwrite homeassistant/+/waymark_s1/+/config
            topic write waymark/v1/s1/homeassistant/#

            """), "\(acl)")
        #expect(acl.contains("""
            user bridge@s2
            topic write waymark/v1/s2/gateways/g1/sightings/#
            topic write waymark/v1/s2/gateways/g1/status
            topic read home/TheengsGateway/BTtoMQTT/+
            topic read home/TheengsGateway/LWT

            """), "\(acl)")
        #expect(!acl.contains("bridge@s1"), "no bridge account for a site without foreign_gateways")

        // Removing a gateway revokes it and says so.
        let third = try DeployCommand.run(script, [one, other, out.path])
        try #require(third.status == 0, "\(third)")
        #expect(third.stdout.contains("no longer in any site file, so without access: gw.g2@s1"), "\(third)")
        #expect(try !String(contentsOf: out.appendingPathComponent("passwd"), encoding: .utf8).contains("gw.g2@s1"))
    }
}
