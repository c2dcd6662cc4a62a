import Foundation
import Testing

/// The broker configuration from deploy/mosquitto/ enforces who may use which topic: checked with a
/// real Mosquitto and the real command-line clients (see `DeployBroker`).
///
/// Negative checks use persistent QoS 1 sessions opened before anything is published: whatever the
/// broker would deliver to a session is queued for it, so collecting the session afterwards shows
/// everything it was ever given, and each test compares that with the exact expected list.
@Suite("Deploy: Mosquitto ACL, credentials and TLS", .serialized, .enabled(if: DeployEnvironment.brokerSuiteRuns))
struct DeployBrokerTests {
    let a = DeployBroker.gatewayUser("gw-a")
    let b = DeployBroker.gatewayUser("gw-b")
    let aggregator = DeployBroker.aggregatorUser
    let reader = DeployBroker.readerUser

    @Test("anonymous clients and wrong passwords are refused")
    func anonymousRefused() throws {
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let topic = "\(broker.prefix)/gateways/gw-a/sightings"

        let anonymous = try broker.publish(broker.connection(nil), topic: topic, "anonymous")
        #expect(anonymous.status != 0)
        #expect(anonymous.stderr.contains("not authorised"), "\(anonymous)")
        let anonymousSub = try DeployCommand.run("mosquitto_sub", broker.connection(nil) + ["-t", "#", "-E"])
        #expect(anonymousSub.status != 0 && anonymousSub.stderr.contains("not authorised"), "\(anonymousSub)")
        let anonymousTLS = try broker.publish(broker.connection(nil, tls: true), topic: topic, "anonymous over TLS")
        #expect(anonymousTLS.status != 0 && anonymousTLS.stderr.contains("not authorised"), "\(anonymousTLS)")

        let wrong = try broker.publish(broker.connection(a, password: "not-the-password"), topic: topic, "x")
        #expect(wrong.status != 0 && wrong.stderr.contains("not authorised"), "\(wrong)")
        // gw-b's password does not open gw-a's account.
        let swapped = try broker.publish(broker.connection(a, password: broker.password(b)), topic: topic, "x")
        #expect(swapped.status != 0 && swapped.stderr.contains("not authorised"), "\(swapped)")

        // Positive control: the same publish with gw-a's own credentials is accepted.
        let own = try broker.publish(broker.connection(a), topic: topic, "own")
        #expect(own.status == 0, "\(own)")
    }

    @Test("a gateway cannot publish as another gateway; the reader and aggregator cannot publish sightings")
    func gatewayCannotImpersonate() throws {
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let p = broker.prefix
        let aggregatorTopics = ["\(p)/gateways/+/sightings", "\(p)/gateways/+/status"]
        try broker.openSession(broker.connection(aggregator), clientID: "agg", topics: aggregatorTopics)
        try broker.openSession(broker.connection(b), clientID: "gw-b", topics: ["\(p)/gateways/gw-b/ack"])
        try broker.openSession(broker.connection(reader), clientID: "app", topics: ["\(p)/devices/#", "\(p)/events"])

        // Forgeries by gw-a: another gateway's batches and status, acks, the aggregator's outputs.
        let asA = try broker.connection(a)
        try broker.publish(asA, topic: "\(p)/gateways/gw-b/sightings", "forged-batch")
        try broker.publish(asA, topic: "\(p)/gateways/gw-b/status", "forged-offline", retain: true)
        try broker.publish(asA, topic: "\(p)/gateways/gw-b/ack", "forged-ack")
        try broker.publish(asA, topic: "\(p)/gateways/gw-a/ack", "self-ack")
        try broker.publish(asA, topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-ff/state", "forged-state")
        try broker.publish(asA, topic: "\(p)/events", "forged-event")
        try broker.publish(asA, topic: "waymark/v1/other-site/gateways/gw-a/sightings", "other-site")
        // The read-only reader and the aggregator are not gateways either.
        try broker.publish(broker.connection(reader), topic: "\(p)/events", "reader-event")
        try broker.publish(broker.connection(reader), topic: "\(p)/gateways/gw-b/ack", "reader-ack")
        try broker.publish(broker.connection(aggregator), topic: "\(p)/gateways/gw-b/sightings", "aggregator-batch")
        // Positive controls, published last: gw-a's own batch and status.
        try broker.publish(asA, topic: "\(p)/gateways/gw-a/sightings", "genuine-batch")
        try broker.publish(asA, topic: "\(p)/gateways/gw-a/status", "genuine-online", retain: true)

        let received = try broker.collect(broker.connection(aggregator), clientID: "agg", topics: aggregatorTopics, skipRetained: true)
        #expect(received == ["\(p)/gateways/gw-a/sightings genuine-batch", "\(p)/gateways/gw-a/status genuine-online"])
        #expect(try broker.collect(broker.connection(b), clientID: "gw-b", topics: ["\(p)/gateways/gw-b/ack"]) == [])
        #expect(try broker.collect(broker.connection(reader), clientID: "app", topics: ["\(p)/devices/#", "\(p)/events"]) == [])

        // The forged retained status was not stored either: a new subscriber sees only gw-a's.
        let retained = try DeployCommand.run("mosquitto_sub", broker.connection(aggregator) + [
            "-t", "\(p)/gateways/+/status", "--retained-only", "-v", "-W", "1"])
        #expect(retained.lines == ["\(p)/gateways/gw-a/status genuine-online"], "\(retained)")
        #expect(broker.log.contains("Denied PUBLISH"), "the broker should log each denied publish")
    }

    @Test("a gateway receives nothing from other gateways' topics or the aggregator's outputs, only its own ack")
    func gatewayCannotSnoop() throws {
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let p = broker.prefix
        let snoopTopics = [
            "\(p)/gateways/gw-a/ack",  // its own: allowed
            "\(p)/gateways/gw-b/ack", "\(p)/gateways/+/ack", "\(p)/gateways/+/sightings", "\(p)/gateways/+/status",
            "\(p)/devices/#", "\(p)/events", "\(p)/notifications", "\(p)/#", "#",
        ]
        try broker.openSession(broker.connection(a), clientID: "gw-a", topics: snoopTopics)
        try broker.openSession(broker.connection(b), clientID: "gw-b", topics: ["\(p)/gateways/gw-b/ack"])
        let readerTopics = ["\(p)/devices/#", "\(p)/events", "\(p)/notifications", "\(p)/gateways/#"]
        try broker.openSession(broker.connection(reader), clientID: "app", topics: readerTopics)

        let asB = try broker.connection(b), asAggregator = try broker.connection(aggregator)
        try broker.publish(asB, topic: "\(p)/gateways/gw-b/sightings", "b-batch")
        try broker.publish(asB, topic: "\(p)/gateways/gw-b/status", "b-online", retain: true)
        try broker.publish(asAggregator, topic: "\(p)/gateways/gw-b/ack", "ack-for-b")
        try broker.publish(asAggregator, topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-ff/state", "device-state")
        try broker.publish(asAggregator, topic: "\(p)/events", "device-event")
        try broker.publish(asAggregator, topic: "\(p)/notifications", "hello")
        try broker.publish(asAggregator, topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-ff/notifications", "device-hello")
        try broker.publish(asAggregator, topic: "\(p)/gateways/gw-a/ack", "ack-for-a")

        // gw-a subscribed to everything, and got exactly its own ack (once per matching subscription
        // at most; the broker may or may not fold overlapping subscriptions).
        let snooped = try broker.collect(broker.connection(a), clientID: "gw-a", topics: snoopTopics)
        #expect(!snooped.isEmpty, "positive control: gw-a should receive its own ack")
        #expect(Set(snooped) == ["\(p)/gateways/gw-a/ack ack-for-a"])
        // The aggregator's ack reached gw-b, and only gw-b's ack did.
        #expect(try broker.collect(asB, clientID: "gw-b", topics: ["\(p)/gateways/gw-b/ack"]) == ["\(p)/gateways/gw-b/ack ack-for-b"])
        // The reader gets device state, events and notifications, never the gateways' traffic.
        let app = try broker.collect(broker.connection(reader), clientID: "app", topics: readerTopics)
        #expect(app == ["\(p)/devices/mac:aa-bb-cc-dd-ee-ff/state device-state", "\(p)/events device-event",
                        "\(p)/notifications hello", "\(p)/devices/mac:aa-bb-cc-dd-ee-ff/notifications device-hello"])
    }

    @Test("the TLS listener accepts clients that verify the server with the site CA and log in")
    func tlsListener() throws {
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let p = broker.prefix
        try broker.openSession(broker.connection(aggregator), clientID: "agg", topics: ["\(p)/gateways/+/sightings"])

        let overTLS = try broker.publish(broker.connection(a, tls: true), topic: "\(p)/gateways/gw-a/sightings", "over-tls")
        #expect(overTLS.status == 0, "\(overTLS)")
        let tlsAggregator = try broker.connection(aggregator, tls: true)
        #expect(try broker.collect(tlsAggregator, clientID: "agg", topics: ["\(p)/gateways/+/sightings"]) == ["\(p)/gateways/gw-a/sightings over-tls"])

        // Plain MQTT to the TLS port gets no MQTT session.
        let plain = try DeployCommand.run("mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.tlsPort), "-u", a,
                                                            "-P", broker.password(a), "-q", "1", "-t", "\(p)/gateways/gw-a/sightings", "-m", "plain"], timeout: 15)
        #expect(plain.status != 0, "\(plain)")
        // A client that trusts a different CA refuses the broker's certificate.
        let otherCA = try DeployEnvironment.temporaryDirectory("other-ca")
        defer { try? FileManager.default.removeItem(at: otherCA) }
        let made = try DeployCommand.run(DeployEnvironment.script("deploy/mosquitto/make-certs.sh"), [otherCA.path, "localhost"])
        try #require(made.status == 0, "\(made)")
        let mistrust = try DeployCommand.run("mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.tlsPort),
                                                               "--cafile", otherCA.appendingPathComponent("ca.crt").path,
                                                               "-u", a, "-P", broker.password(a), "-q", "1",
                                                               "-t", "\(p)/gateways/gw-a/sightings", "-m", "mistrust"], timeout: 15)
        #expect(mistrust.status != 0, "\(mistrust)")
    }
}
