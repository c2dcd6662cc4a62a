import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkMQTT
import WaymarkPostgres

/// `waymark simulate --publish`: the simulator acting as a site's gateways against the real broker
/// and a real aggregator (in this process) writing to the real PostgreSQL.
@Suite("Simulate --publish", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct SimulatePublishTests {
    @Test("every simulated batch reaches the database once and is acked; the gateways end offline")
    func publishesLikeTheGateways() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("simulate_publish")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "simpub-\(UInt32.random(in: 0...UInt32.max))"
        let regions = 4
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: regions))
        let site = try SiteLoader.load(path: sitePath).site
        let run = AggregatorTestRun(config: AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: db.url,
                                                                     clientID: "agg-\(siteID)"), site: site)
        #expect(run.waitUntilReady())

        let dir = URL(fileURLWithPath: sitePath).deletingLastPathComponent().path
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let start = String(Int(Date().timeIntervalSince1970) - 900)
        let common = [waymark, "simulate", "--site", sitePath, "--devices", "12", "--duration", "10m", "--seed", "5",
                      "--start", start, "--quiet"]
        let sim = try AggregatorProcesses.run(common + [
            "--publish", mqtt, "--speedup", "0", "--sightings", dir + "/s.jsonl", "--ack-wait", "90", "--resend-after", "5",
        ])
        #expect(sim.status == 0, "waymark simulate --publish failed:\n\(sim.output)")
        #expect(run.stop())
        // The same seed and start written to a file: the batches the gateways should have sent.
        let file = try AggregatorProcesses.run(common + ["--sightings", dir + "/s2.jsonl", "--batches", dir + "/b.jsonl"])
        #expect(file.status == 0, "\(file.output)")
        let expected = try String(contentsOfFile: dir + "/b.jsonl", encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(SightingBatch.self, from: Data($0.utf8)) }

        // What the simulator says it published …
        let published = Self.figure(after: " sightings in ", in: sim.output)
        #expect(sim.output.contains("unacked at the end 0"), "\(sim.output)")
        // … is what the aggregator committed, batch for batch and entry for entry.
        let conn = try db.connect()
        let stored = try conn.query("""
            SELECT coalesce(sum(batches), 0)::int8, coalesce(sum(sightings), 0)::int8
            FROM gateway_ingest_hourly WHERE site_id = $1
            """, [siteID]).first
        #expect(published == expected.count, "\(sim.output)")
        #expect(try stored?.int(0) == expected.count)
        #expect(try stored?.int(1) == expected.reduce(0) { $0 + $1.sightings.count })
        #expect(try conn.query("SELECT count(*)::int8 FROM visits WHERE site_id = $1", [siteID]).first?.int(0) ?? 0 > 0)

        // Each gateway's retained status says offline once the simulation is over.
        let statuses = try RetainedReader(url: mqtt, pattern: "waymark/v1/\(siteID)/gateways/+/status", expected: regions)
        defer { statuses.close() }
        #expect(statuses.payloads.count == regions)
        for payload in statuses.payloads.values {
            let status = try JSONDecoder().decode(GatewayStatus.self, from: Data(payload))
            #expect(status.state == .offline)
        }
    }

    /// The integer after `marker` in the simulator's summary line ("… N sightings in B batches …").
    static func figure(after marker: String, in text: String) -> Int? {
        guard let r = text.range(of: marker) else { return nil }
        return Int(text[r.upperBound...].prefix { $0.isNumber })
    }
}

/// Collects the retained messages of a topic pattern.
final class RetainedReader: @unchecked Sendable {
    let client: MQTTClient
    private let lock = NSLock()
    private var received: [String: [UInt8]] = [:]

    init(url: String, pattern: String, expected: Int, timeout: Double = 10) throws {
        client = try MQTTClient(.init(clientID: "retained-\(UInt32.random(in: 0...UInt32.max))"))
        client.onMessage = { [weak self] m in
            guard let self else { return }
            lock.lock(); received[m.topic] = m.payload; lock.unlock()
        }
        _ = try client.subscribe(pattern, qos: 1)
        try client.connect(try MQTTConnection(url: url))
        try client.waitUntilConnected(timeout: 10)
        let deadline = Date().addingTimeInterval(timeout)
        while payloads.count < expected && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    }

    var payloads: [String: [UInt8]] { lock.lock(); defer { lock.unlock() }; return received }
    func close() { client.close() }
}
