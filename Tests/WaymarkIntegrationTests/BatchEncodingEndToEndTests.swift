import Foundation
import Testing
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkEdge
import WaymarkMQTT
import WaymarkPostgres

/// Two real edge agents through the real broker to a real aggregator and PostgreSQL, one gateway
/// publishing protobuf batches and the other JSON (issue 18): every batch stored exactly once,
/// every batch acked back to its gateway, and each gateway's bytes on the wire in the encoding
/// it was configured with.
@Suite("Edge → aggregator with a protobuf and a JSON gateway (Mosquitto + PostgreSQL)",
       .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct BatchEncodingEndToEndTests {
    /// Records every sightings payload on the site's topics: its gateway, encoding and batch.
    final class WireWatcher: @unchecked Sendable {
        let client: MQTTClient
        private let lock = NSLock()
        private var _seen: [(gateway: String, encoding: BatchEncoding, batch: SightingBatch?)] = []

        init(url: String, topics: Topics) throws {
            client = try MQTTClient(.init(clientID: "wire-watcher-\(UInt32.random(in: 0...UInt32.max))"))
            client.onMessage = { [weak self] m in
                guard let self, let (gateway, kind) = topics.gateway(inTopic: m.topic), kind == "sightings" else { return }
                var decoder = BatchDecoder()
                let batch = try? decoder.decode(m.payload)
                lock.lock()
                _seen.append((gateway, BatchEncoding.of(m.payload), batch))
                lock.unlock()
            }
            try client.subscribe(topics.allSightings, qos: 1)
            try client.connect(try MQTTConnection(url: url))
            try client.waitUntilConnected(timeout: 10)
        }

        var seen: [(gateway: String, encoding: BatchEncoding, batch: SightingBatch?)] {
            lock.lock(); defer { lock.unlock() }
            return _seen
        }

        func close() { client.close() }
    }

    @Test func aProtobufAndAJSONGatewayAreStoredExactlyOnceAndAcked() async throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("batch_encodings")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "enc-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 2))
        let site = try SiteLoader.load(path: sitePath).site
        let topics = Topics(site: siteID)

        // Four devices walking r0 → r1 → r0, heard by both gateways every second for 3 minutes:
        // one sightings file that both edges replay (each keeps its own gateway's lines).
        let start = (Date().timeIntervalSince1970 - 3600).rounded(.down)
        let records = AggregatorTestVenue.records(devices: 4, path: [0, 1, 0], dwell: 60, start: start, regions: 2)
        let lines = records.map { r in
            #"{"t":\#(r.t),"gateway":"gw-\#(r.gateway)","device":"\#(r.device.rawValue)","rssi":\#(r.rssi),"tx":-59}"#
        }
        let replayPath = try aggregatorTempFile("sightings.jsonl", lines.joined(separator: "\n") + "\n")

        let watcher = try WireWatcher(url: mqtt, topics: topics)
        defer { watcher.close() }
        var config = AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: db.url, clientID: "agg-\(siteID)")
        config.rawSightings = true
        let run = AggregatorTestRun(config: config, site: site)
        #expect(run.waitUntilReady())

        var agents: [(encoding: BatchEncoding, agent: RunningAgent, spool: String)] = []
        for (g, encoding) in [(0, BatchEncoding.protobuf), (1, .json)] {
            let spool = EdgeHarness.temporaryDirectory("enc-spool-\(g)")
            var c = EdgeConfig(sitePath: sitePath, gateway: "gw-\(g)")
            c.mqtt.url = mqtt
            c.mqtt.clientID = "edge-\(siteID)-\(g)"
            c.spoolDir = spool
            c.spoolFsync = false
            c.spoolResendAfterS = 2
            c.mqtt.reconnectMinS = 1
            c.mqtt.reconnectMaxS = 1
            c.statusIntervalS = 1
            c.metricsPort = 0
            c.publishEncoding = encoding
            let agent = try RunningAgent(site: site, config: c, source: ReplaySource(path: replayPath, rate: 0))
            agents.append((encoding, agent, spool))
        }
        defer { for a in agents { try? FileManager.default.removeItem(atPath: a.spool) } }
        let allAcked = await eventually(timeout: 120) {
            agents.allSatisfy { a in
                let s = a.agent.agent.snapshot()
                return s.sourceFinished && s.nextSeq > 1 && s.spoolDepth == 0 && s.runtime.acked == Int(s.nextSeq - 1)
            }
        }
        #expect(allAcked, "not every batch was acked: \(agents.map { ($0.encoding, $0.agent.agent.snapshot().spoolDepth) })")
        for a in agents { try await a.agent.stop() }
        #expect(run.stop())
        #expect(run.error == nil)

        let conn = try db.connect()
        for (g, a) in agents.enumerated() {
            let gateway = "gw-\(g)"
            let snapshot = a.agent.agent.snapshot()
            let published = Int(snapshot.nextSeq - 1)
            let boot = a.agent.agent.boot

            // On the wire: only this gateway's encoding, and every batch decodes.
            let wire = watcher.seen.filter { $0.gateway == gateway }
            #expect(!wire.isEmpty)
            #expect(wire.allSatisfy { $0.encoding == a.encoding }, "\(gateway) sent another encoding than \(a.encoding)")
            #expect(wire.allSatisfy { $0.batch != nil }, "\(gateway): a payload on the wire does not decode")
            // Distinct batches seen (a resend repeats one), and their sightings.
            var batches: [UInt64: SightingBatch] = [:]
            for w in wire { if let b = w.batch { batches[b.seq] = b } }
            #expect(batches.count == published)
            let sent = batches.values.reduce(0) { $0 + $1.sightings.count }
            #expect(sent == records.filter { $0.gateway == g }.count)

            // In the database: each batch's sightings exactly once, the mark at the last batch,
            // the hourly ingest counts exact, nothing rejected.
            let raw = try #require(try conn.query("""
                SELECT count(*), count(DISTINCT seq), count(DISTINCT (seq, device_id)), min(seq), max(seq)
                FROM sightings WHERE site_id = $1 AND gateway_id = $2 AND boot = $3
                """, [siteID, gateway, boot]).first)
            #expect(try raw.int(0) == sent, "\(gateway): raw sightings stored")
            #expect(try raw.int(1) == published && raw.int(2) == sent, "\(gateway): a batch stored twice or not at all")
            #expect(try raw.int(3) == 1 && raw.int(4) == published)
            let mark = try conn.query("SELECT seq FROM gateway_progress WHERE site_id = $1 AND gateway_id = $2 AND boot = $3",
                                      [siteID, gateway, boot]).first
            #expect(try mark?.int(0) == published)
            let ingest = try #require(try conn.query("""
                SELECT coalesce(sum(batches), 0)::bigint, coalesce(sum(sightings), 0)::bigint FROM gateway_ingest_hourly
                WHERE site_id = $1 AND gateway_id = $2
                """, [siteID, gateway]).first)
            #expect(try ingest.int(0) == published && ingest.int(1) == sent)
        }
        #expect(try conn.query("SELECT count(*) FROM gateway_rejections WHERE site_id = $1", [siteID]).first?.int(0) == 0)
        // Both gateways' evidence reached the engine: the devices were placed in both regions.
        let regions = try conn.query("SELECT DISTINCT region_id FROM region_events WHERE site_id = $1 AND region_id IS NOT NULL ORDER BY 1",
                                     [siteID]).rows.map { try $0.string(0) }
        #expect(regions == ["r0", "r1"])
    }
}

extension RunningAgent {
    /// An agent of any site (the harness's initialiser uses its one-gateway site).
    convenience init(site: Site, config: EdgeConfig, source: any SightingSource) throws {
        self.init(agent: try EdgeAgent(config: config, site: site, source: source))
    }
}
