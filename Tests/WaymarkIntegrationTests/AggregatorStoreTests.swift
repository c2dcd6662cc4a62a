import Foundation
import Testing
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkFusion
import WaymarkPostgres

/// `AggregatorStore` against the real server: binary checkpoints (schema 0005), rows written by an
/// aggregator from before it, and the status history a restart starts from.
@Suite("Aggregator store (PostgreSQL)", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct AggregatorStoreTests {
    func fused(siteID: String) throws -> (site: Site, core: AggregatorCore) {
        let site = try SiteLoader.load(path: try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 4))).site
        let settings = AggregatorCore.Settings(clock: .recorded)
        var core = AggregatorCore(site: site, topics: Topics(site: siteID), settings: settings)
        let records = AggregatorTestVenue.records(devices: 3, path: [0, 1, 2, 3], dwell: 30, start: 1_700_000_000, regions: 4)
        for b in AggregatorTestVenue.batches(records, boot: "b") {
            _ = core.handle(topic: Topics(site: siteID).sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
        }
        let status = GatewayStatus(state: .online, gateway: "gw-2", boot: "b", t: nil)
        _ = core.handle(topic: Topics(site: siteID).status("gw-2"), payload: Array(try JSONEncoder().encode(status)), receivedAt: 1_700_000_500)
        return (site, core)
    }

    @Test func binaryCheckpointsAndLegacyJSONRowsBothRestore() throws {
        let db = try PostgresTestDatabase("aggregator_store")
        defer { db.drop() }
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        let siteID = "store-\(UInt32.random(in: 0...UInt32.max))"
        var (site, core) = try fused(siteID: siteID)
        let store = AggregatorStore(siteID: siteID)
        try store.checkSchema(conn)
        try store.syncSite(conn, site)
        let sealed = core.sealWrite()
        let batch = try #require(sealed)
        #expect(batch.checkpoints.count == 3)
        try store.write(conn, batch)

        // Written in binary, the JSON column empty.
        let stored = try conn.query("SELECT count(*), count(checkpoint), count(state) FROM device_state WHERE site_id = $1", [siteID]).first
        #expect(try stored?.int(0) == 3 && stored?.int(1) == 3 && stored?.int(2) == 0)

        // One device as an aggregator from before schema 0005 left it: JSON only.
        let legacy = batch.checkpoints[0]
        try conn.query("UPDATE device_state SET state = $3::jsonb, checkpoint = NULL WHERE site_id = $1 AND device_id = $2",
                       [siteID, legacy.device.rawValue, String(decoding: try JSONEncoder().encode(legacy), as: UTF8.self)])
        // Another as an older aggregator rewrote it after a newer one: its JSON is the latest.
        let rewritten = batch.checkpoints[1]
        try conn.query("UPDATE device_state SET state = $3::jsonb WHERE site_id = $1 AND device_id = $2",
                       [siteID, rewritten.device.rawValue, String(decoding: try JSONEncoder().encode(rewritten), as: UTF8.self)])

        let restored = try store.load(conn)
        #expect(restored.undecodable == 0)
        #expect(Set(restored.devices) == Set(batch.checkpoints))
        #expect(restored.progress == batch.progress)
        #expect(restored.statuses["gw-2"] == StatusSummary(state: .online, boot: "b"))

        // A checkpoint from an engine whose state has another shape is ignored, not misread.
        try conn.query("UPDATE device_state SET state = NULL, checkpoint = $3::bytea WHERE site_id = $1 AND device_id = $2",
                       [siteID, legacy.device.rawValue, PostgresBytes(try CompactBinaryEncoder().encode(["not", "a", "checkpoint"]))])
        let again = try store.load(conn)
        #expect(again.undecodable == 1)
        #expect(Set(again.devices) == Set(batch.checkpoints.dropFirst()))

        // The next write converts a legacy row back to binary.
        var next = WriteBatch()
        next.checkpoints = [rewritten]
        next.aggregatorState = batch.aggregatorState
        try store.write(conn, next)
        #expect(try conn.query("SELECT state IS NULL AND checkpoint IS NOT NULL FROM device_state WHERE site_id = $1 AND device_id = $2",
                               [siteID, rewritten.device.rawValue]).first?.bool(0) == true)
    }

    @Test func bytesBindInBinaryAndReadBackExactly() throws {
        let db = try PostgresTestDatabase("aggregator_bytes")
        defer { db.drop() }
        let conn = try db.connect()
        let bytes = PostgresBytes((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 37) } + [0, 0x5C, 0x27, 0])
        let row = try #require(try conn.query("SELECT $1::bytea, octet_length($1::bytea), substring($1::bytea FROM 3 FOR 2)", [bytes]).first)
        #expect(try row.decode(PostgresBytes.self, 0) == bytes)
        #expect(try row.int(1) == bytes.bytes.count)
        #expect(try row.decode(PostgresBytes.self, 2).bytes == Array(bytes.bytes[2..<4]))
        // Inside an array parameter the hex text form is used.
        let array = try #require(try conn.query("SELECT ($1::bytea[])[2]", [[PostgresBytes([1, 2]), PostgresBytes([0xFF])]]).first)
        #expect(try array.decode(PostgresBytes.self, 0) == PostgresBytes([0xFF]))
    }

    /// What the writer reads back after a commit whose reply was lost (issue 19): the number of the
    /// last committed write, stored in the same transaction as its rows; the number of a write that
    /// did not commit is above it, and the engine's calibration rides along in the same state.
    @Test func theLastCommittedWriteNumberIsReadBack() throws {
        let db = try PostgresTestDatabase("aggregator_write_number")
        defer { db.drop() }
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        let siteID = "wn-\(UInt32.random(in: 0...UInt32.max))"
        var (site, core) = try fused(siteID: siteID)
        let store = AggregatorStore(siteID: siteID)
        try store.syncSite(conn, site)
        #expect(try store.committedWrite(conn) == 0)
        let sealedFirst = core.sealWrite()
        let first = try #require(sealedFirst)
        try store.write(conn, first)
        #expect(try store.committedWrite(conn) == first.aggregatorState.writeNumber)
        // A later write that never reached the server is not taken for stored.
        let status = GatewayStatus(state: .offline, gateway: "gw-1", boot: "b", t: nil)
        _ = core.handle(topic: Topics(site: siteID).status("gw-1"), payload: Array(try JSONEncoder().encode(status)), receivedAt: 1_700_000_600)
        let sealedSecond = core.sealWrite()
        let second = try #require(sealedSecond)
        #expect(second.aggregatorState.writeNumber == first.aggregatorState.writeNumber + 1)
        #expect(try store.committedWrite(conn) < second.aggregatorState.writeNumber)
        // A restarted aggregator numbers on from what was committed, with the calibration restored.
        let restored = try store.load(conn)
        #expect(restored.state?.writeNumber == first.aggregatorState.writeNumber)
        #expect(restored.state?.calibration != nil)
        #expect(restored.state?.calibration == first.aggregatorState.calibration)
    }

    /// `fusion.forget_after_s` through PostgreSQL: the write deletes a forgotten device's
    /// checkpoint, and an aggregator restarted from the stored checkpoints (engine slots restored by
    /// ordinal, forgotten ones free) forgets, reuses slots and records exactly as one that never
    /// stopped.
    @Test func forgottenDevicesLeaveDeviceStateAndARestartContinuesAsWithoutIt() throws {
        let db = try PostgresTestDatabase("aggregator_forget")
        defer { db.drop() }
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        let siteID = "forget-\(UInt32.random(in: 0...UInt32.max))"
        let yaml = AggregatorTestVenue.yaml(site: siteID, count: 4) + "  forget_after_s: 60\n  journey_timeout_s: 60\n"
        let site = try SiteLoader.load(path: try aggregatorTempFile("site.yaml", yaml)).site
        let topics = Topics(site: siteID)
        let settings = AggregatorCore.Settings(clock: .recorded)
        let start = 1_700_000_000.0
        // Three waves of three visitors 400 s apart (each forgotten before the next comes), and a
        // resident tag (device 99) heard every 2 s at r3 throughout, which keeps the clock going.
        var records: [AggregatorTestVenue.Record] = []
        for wave in 0..<3 {
            records += AggregatorTestVenue.records(devices: 3, path: [0, 1, 2], dwell: 10, start: start + 400 * Double(wave), regions: 4)
                .map { r in
                    var r = r
                    r.device = AggregatorTestVenue.device(Int(r.device.rawValue.split(separator: ":").last!)! + 3 * wave)
                    return r
                }
        }
        for k in 0..<650 {
            records.append(.init(t: start + 2 * Double(k) + 0.5, gateway: 3, device: AggregatorTestVenue.device(99), rssi: -50))
        }
        records.sort { ($0.t, $0.gateway) < ($1.t, $1.gateway) }
        let batches = AggregatorTestVenue.batches(records, boot: "b")
        func feed(_ core: inout AggregatorCore, _ part: ArraySlice<SightingBatch>, store: AggregatorStore?,
                  into writes: inout [WriteBatch]) throws {
            for (i, b) in part.enumerated() {
                _ = core.handle(topic: topics.sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
                if i % 40 == 39, let w = core.sealWrite() {
                    if let store { try store.write(conn, w) }
                    writes.append(w)
                }
            }
            if let w = core.sealWrite() {
                if let store { try store.write(conn, w) }
                writes.append(w)
            }
        }
        var straight = AggregatorCore(site: site, topics: topics, settings: settings)
        var straightWrites: [WriteBatch] = []
        try feed(&straight, batches[...], store: nil, into: &straightWrites)

        // The first run stops in the second wave, after the first was forgotten.
        let split = try #require(batches.firstIndex { $0.start >= start + 430 })
        let store = AggregatorStore(siteID: siteID)
        try store.syncSite(conn, site)
        var first = AggregatorCore(site: site, topics: topics, settings: settings)
        var firstWrites: [WriteBatch] = []
        try feed(&first, batches[..<split], store: store, into: &firstWrites)
        let gone = firstWrites.flatMap(\.forgottenDevices)
        #expect(Set(gone) == Set((0..<3).map(AggregatorTestVenue.device)))
        let rows = try conn.query("SELECT device_id, ordinal FROM device_state WHERE site_id = $1 ORDER BY ordinal", [siteID])
        let stored = try rows.rows.map { try $0.string(0) }
        #expect(stored.count == first.fusion.deviceCount)
        #expect(Set(stored).isDisjoint(with: gone.map(\.rawValue)), "no checkpoint row of a forgotten device")
        #expect(Set(stored).isSuperset(of: (3..<6).map { AggregatorTestVenue.device($0).rawValue }))
        // The second wave took the first wave's slots: the ordinals have no gap at the front.
        #expect(try rows.rows.map { try $0.int(1) }.sorted() == Array(0..<stored.count))

        let restored = try store.load(conn)
        var second = AggregatorCore(site: site, topics: topics, settings: settings)
        second.restore(devices: restored.devices, progress: restored.progress, state: restored.state, statuses: restored.statuses)
        var secondWrites: [WriteBatch] = []
        try feed(&second, batches[...], store: store, into: &secondWrites)

        let resumed = firstWrites + secondWrites
        #expect(straightWrites.flatMap(\.forgottenDevices).count == 9)
        #expect(resumed.flatMap(\.forgottenDevices) == straightWrites.flatMap(\.forgottenDevices))
        #expect(resumed.flatMap(\.visits) == straightWrites.flatMap(\.visits))
        #expect(resumed.flatMap(\.journeys) == straightWrites.flatMap(\.journeys))
        #expect(resumed.flatMap(\.transitions) == straightWrites.flatMap(\.transitions))
        for n in [99] + Array(0..<9) {
            let d = AggregatorTestVenue.device(n)
            #expect(second.fusion.existingHandle(for: d) == straight.fusion.existingHandle(for: d))
        }
        let left = try conn.query("SELECT device_id FROM device_state WHERE site_id = $1", [siteID]).rows.map { try $0.string(0) }
        #expect(left == [AggregatorTestVenue.device(99).rawValue], "only the resident tag is held at the end")
    }
}
