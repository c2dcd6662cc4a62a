import Testing
import WaymarkCore
@testable import WaymarkBridge

/// The bridge's core: topics to receivers, readings to windows, windows to numbered batches,
/// receivers' liveness to statuses.
@Suite struct ForeignBridgeTests {
    let t0 = 1_780_000_000.0

    /// A bridge without empty batches unless the settings ask for them (``emptyBatches()`` tests those).
    func bridge(_ settings: ForeignBridge.Settings = Self.noEmptyBatches) throws -> ForeignBridge {
        let counter = BootCounter()
        return ForeignBridge(site: try BridgeTestSite.site(), settings: settings, makeBoot: { counter.next() })
    }

    func espresense(_ id: String, rssi: Int, room: String = "kitchen") -> (String, [UInt8]) {
        ("espresense/devices/\(id)/\(room)", Array(#"{"id":"\#(id)","idType":180,"rssi@1m":-59,"rssi":\#(rssi),"mac":"c3f2a1b4d5e6"}"#.utf8))
    }

    static let noEmptyBatches: ForeignBridge.Settings = {
        var s = ForeignBridge.Settings()
        s.emptyBatches = false
        return s
    }()

    static let beaconID = "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7"

    func batches(_ out: [ForeignBridge.Output]) -> [SightingBatch] {
        out.compactMap { if case .batch(let b, _) = $0 { b } else { nil } }
    }

    @Test("subscriptions: every ESPresense device topic, the Theengs publish topic's children, each receiver's status")
    func subscriptions() throws {
        let b = try bridge()
        #expect(Set(b.router.subscriptions) == [
            "espresense/devices/+/+", "home/TheengsGateway/BTtoMQTT/+",
            "espresense/rooms/kitchen/status", "espresense/rooms/office/status", "home/TheengsGateway/LWT",
        ])
    }

    @Test("readings of one window become one batch per receiver, numbered 1, 2, … in the receiver's boot")
    func windows() throws {
        var b = try bridge()
        let (topic, payload) = espresense(Self.beaconID, rssi: -70)
        #expect(b.receive(topic: topic, payload: payload, retained: false, at: t0 + 0.2) == .reading(gateway: "gw-kitchen"))
        let (topic2, payload2) = espresense(Self.beaconID, rssi: -66)
        _ = b.receive(topic: topic2, payload: payload2, retained: false, at: t0 + 0.7)
        #expect(batches(b.tick(now: t0 + 0.9)).isEmpty)
        let first = batches(b.tick(now: t0 + 1.05))
        #expect(first.count == 1)
        let batch = try #require(first.first)
        #expect(batch.gateway == "gw-kitchen")
        #expect(batch.seq == 1)
        #expect(batch.boot == b.boot(of: "gw-kitchen"))
        #expect(batch.start == t0 && batch.end == t0 + 1)
        let entry = try #require(batch.sightings.first)
        #expect(entry.device == DeviceID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7"))
        #expect(entry.count == 2 && entry.rssiMax == -66 && entry.rssiMean == -68 && entry.rssiLast == -66 && entry.tx == -59)
        #expect(entry.first == t0 + 0.2 && entry.last == t0 + 0.7)
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 2.5)
        #expect(batches(b.tick(now: t0 + 3.1)).map(\.seq) == [2])
    }

    @Test("a batch that could not be sent, or a reconnect, starts a new boot at seq 1 (no gap for the aggregator)")
    func boots() throws {
        var b = try bridge()
        let (topic, payload) = espresense(Self.beaconID, rssi: -70)
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0)
        let first = try #require(batches(b.tick(now: t0 + 1.1)).first)
        b.batchNotSent(gateway: "gw-kitchen")
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 2)
        let second = try #require(batches(b.tick(now: t0 + 3.1)).first)
        #expect(second.boot != first.boot)
        #expect(second.seq == 1)
        b.reconnected(gateway: "gw-kitchen")
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 4)
        let third = try #require(batches(b.tick(now: t0 + 5.1)).first)
        #expect(third.boot != second.boot && third.seq == 1)
        #expect(b.counters.bootsRestarted == 2)
    }

    @Test("rejected: implausible RSSI, retained readings, malformed JSON, unmapped rooms — counted, nothing windowed")
    func rejections() throws {
        var b = try bridge()
        let (topic, _) = espresense(Self.beaconID, rssi: 0)
        let positive = Array(#"{"id":"x","rssi":12,"rssi@1m":-59}"#.utf8)
        guard case .rejected(_, let e1) = b.receive(topic: topic, payload: positive, retained: false, at: t0) else { Issue.record("accepted"); return }
        #expect(e1.reason == .implausibleRSSI)
        let (_, good) = espresense(Self.beaconID, rssi: -70)
        guard case .rejected(_, let e2) = b.receive(topic: topic, payload: good, retained: true, at: t0) else { Issue.record("accepted"); return }
        #expect(e2.reason == .retained)
        guard case .rejected(_, let e3) = b.receive(topic: topic, payload: Array("{".utf8), retained: false, at: t0) else { Issue.record("accepted"); return }
        #expect(e3.reason == .malformed)
        #expect(b.receive(topic: "espresense/devices/\(Self.beaconID)/attic", payload: good, retained: false, at: t0) == .unmappedRoom("attic"))
        #expect(b.counters.rejected == ["implausible_rssi": 1, "retained": 1, "malformed": 1, "unmapped": 1])
        #expect(batches(b.tick(now: t0 + 2)).isEmpty)
    }

    @Test("an implausible measured power is ignored and counted; the reading is kept")
    func implausibleTx() throws {
        var b = try bridge()
        let payload = Array(#"{"id":"\#(Self.beaconID)","rssi":-70,"rssi@1m":40}"#.utf8)
        #expect(b.receive(topic: "espresense/devices/x/kitchen", payload: payload, retained: false, at: t0) == .reading(gateway: "gw-kitchen"))
        let batch = try #require(batches(b.tick(now: t0 + 1.1)).first)
        #expect(batch.sightings.first?.tx == nil)
        #expect(b.counters.implausibleTx == 1)
    }

    @Test("a reading stamped before the open window (clock stepped back) goes into the window at its start")
    func late() throws {
        var b = try bridge()
        let (topic, payload) = espresense(Self.beaconID, rssi: -70)
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 5.5)
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 3.2)
        #expect(b.counters.lateReadings == 1)
        let batch = try #require(batches(b.tick(now: t0 + 6.1)).first)
        #expect(batch.start == t0 + 5)
        #expect(batch.sightings.first?.first == t0 + 5)
        #expect(batch.sightings.first?.count == 2)
    }

    @Test("Theengs readings reach their gateway; untracked devices are filtered, not published")
    func theengs() throws {
        var b = try bridge()
        let topic = "home/TheengsGateway/BTtoMQTT/C47C8D6A1234"
        let tracked = Array(#"{"id":"C4:7C:8D:6A:12:34","mac_type":0,"rssi":-69}"#.utf8)
        #expect(b.receive(topic: topic, payload: tracked, retained: false, at: t0) == .reading(gateway: "gw-garage"))
        let other = Array(#"{"id":"C4:7C:8D:6A:99:99","mac_type":0,"rssi":-69}"#.utf8)
        #expect(b.receive(topic: "home/TheengsGateway/BTtoMQTT/C47C8D6A9999", payload: other, retained: false, at: t0)
                == .filtered(gateway: "gw-garage", .untracked))
        let out = batches(b.tick(now: t0 + 1.1))
        #expect(out.count == 1)
        #expect(out.first?.sightings.map(\.device) == [DeviceID("mac:c4-7c-8d-6a-12-34")!])
    }

    @Test("status: online from the receiver's last-will topic, offline when it says so, heartbeat every interval, offline at the end")
    func statuses() throws {
        var settings = Self.noEmptyBatches
        settings.statusIntervalS = 10
        var b = try bridge(settings)
        func status(_ out: [ForeignBridge.Output], _ gateway: String) -> GatewayStatus? {
            out.compactMap { if case .status(let s) = $0, s.gateway == gateway { s } else { nil } }.first
        }
        _ = b.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), retained: true, at: t0)
        let first = b.tick(now: t0)
        #expect(status(first, "gw-kitchen")?.state == .online)
        #expect(status(first, "gw-kitchen")?.scan == "on")
        #expect(status(first, "gw-office")?.state == .offline, "no status and no reading: its regions must not look covered")
        #expect(status(b.tick(now: t0 + 5), "gw-kitchen") == nil)
        #expect(status(b.tick(now: t0 + 10.5), "gw-kitchen")?.state == .online)
        _ = b.receive(topic: "espresense/rooms/kitchen/status", payload: Array("offline".utf8), retained: false, at: t0 + 11)
        #expect(status(b.tick(now: t0 + 11), "gw-kitchen")?.state == .offline)
        // A reading proves the node is up; then silence beyond receiver_silence_s (60 s) makes it offline.
        let (topic, payload) = espresense(Self.beaconID, rssi: -70, room: "office")
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 12)
        #expect(status(b.tick(now: t0 + 12), "gw-office")?.state == .online)
        #expect(status(b.tick(now: t0 + 80), "gw-office")?.state == .offline)
        let end = b.finish(now: t0 + 81)
        #expect(b.gateways.allSatisfy { status(end, $0)?.state == .offline })
        #expect(b.lastWill(for: "gw-kitchen").state == .offline)
    }
}

extension ForeignBridgeTests {
    @Test("an online receiver that heard nothing tracked sends an empty batch per window (the aggregator's clock); an offline one does not")
    func emptyBatches() throws {
        var b = try bridge(.init())
        _ = b.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), retained: true, at: t0)
        let (topic, payload) = espresense(Self.beaconID, rssi: -70)
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 0.5)
        var kitchen: [SightingBatch] = []
        var office: [SightingBatch] = []
        for step in 1...45 {
            let out = batches(b.tick(now: t0 + Double(step) * 0.1))
            kitchen += out.filter { $0.gateway == "gw-kitchen" }
            office += out.filter { $0.gateway == "gw-office" }
        }
        // Online since t0: an empty batch for the window before, the window with the reading,
        // then one empty batch per window.
        #expect(kitchen.prefix(5).map(\.start) == [t0 - 1, t0, t0 + 1, t0 + 2, t0 + 3])
        #expect(kitchen.prefix(5).map(\.sightings.count) == [0, 1, 0, 0, 0])
        #expect(kitchen.map(\.seq) == Array(1...UInt64(kitchen.count)))
        #expect(office.isEmpty, "a receiver with no status and no reading is offline and sends nothing")
    }
}

/// Boot ids `boot1`, `boot2`, … (deterministic for the tests). `@unchecked Sendable`: each test
/// uses its own counter from its own thread only.
final class BootCounter: @unchecked Sendable {
    private var n = 0
    func next() -> String { n += 1; return "boot\(n)" }
}

/// `publish.shards`: the bridge publishes as a sharded `waymark-edge` does.
@Suite struct ForeignBridgeShardTests {
    let t0 = 1_780_000_000.0

    @Test("with shards each window goes out once per shard, empty ones too, each shard numbered on its own")
    func shards() throws {
        var settings = ForeignBridgeTests.noEmptyBatches
        let layout = ShardLayout(count: 2)!
        settings.shards = layout
        let counter = BootCounter()
        var b = ForeignBridge(site: try BridgeTestSite.site(), settings: settings, makeBoot: { counter.next() })
        // Beacons of both shards heard in one window by the kitchen receiver.
        let ids = (1...12).map { "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-\($0)" }
        for (n, id) in ids.enumerated() {
            let (topic, payload) = ForeignBridgeTests().espresense(id, rssi: -70)
            #expect(b.receive(topic: topic, payload: payload, retained: false, at: t0 + 0.05 * Double(n)) == .reading(gateway: "gw-kitchen"))
        }
        let first = b.tick(now: t0 + 1.05)
        let parts = first.compactMap { if case .batch(let batch, let shard) = $0 { (batch, shard) } else { nil } }
        #expect(parts.map(\.1) == [0, 1])
        #expect(parts.map(\.0.seq) == [1, 1])
        #expect(parts.allSatisfy { batch, shard in batch.sightings.allSatisfy { layout.shard(of: $0.device) == shard } })
        #expect(parts.reduce(0) { $0 + $1.0.sightings.count } == ids.count)
        #expect(Set(parts.map(\.0.sightings.count)).allSatisfy { $0 > 0 }, "both shards hold some of the twelve beacons")
        // The next window has one beacon only: its shard's batch and an empty one for the other, both seq 2.
        let (topic, payload) = ForeignBridgeTests().espresense(ids[0], rssi: -70)
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 1.5)
        let second = b.tick(now: t0 + 2.05).compactMap { if case .batch(let batch, let shard) = $0 { (batch, shard) } else { nil } }
        #expect(second.map(\.1) == [0, 1] && second.map(\.0.seq) == [2, 2])
        #expect(second.filter { !$0.0.sightings.isEmpty }.map(\.1) == [layout.shard(of: DeviceID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1")!)])
        // A new boot restarts every shard at 1.
        b.reconnected(gateway: "gw-kitchen")
        _ = b.receive(topic: topic, payload: payload, retained: false, at: t0 + 2.5)
        let third = b.tick(now: t0 + 3.05).compactMap { if case .batch(let batch, _) = $0 { batch } else { nil } }
        #expect(third.map(\.seq) == [1, 1] && Set(third.map(\.boot)).count == 1 && third[0].boot != second[0].0.boot)
    }
}
