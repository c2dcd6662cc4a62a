import Testing
import WaymarkCore
@testable import WaymarkFusion

/// `EngineFeed`, the feeding rule the aggregator and `waymark replay` share: timers advance
/// before the entry that reaches a new second, and an empty batch is a heartbeat.
@Suite("Engine feed")
struct EngineFeedTests {
    let a = DeviceID("mac:02-00-00-00-00-0a")!
    let b = DeviceID("mac:02-00-00-00-00-0b")!

    func entry(_ device: DeviceID, at t: Double) -> SightingBatch.Entry {
        .init(device: device, count: 3, rssiMax: -58, rssiMean: rssi(atDistance: 1), rssiLast: -60, tx: -59, first: t - 0.3, last: t)
    }

    func batch(_ gateway: String, window start: Double, _ entries: [SightingBatch.Entry]) -> SightingBatch {
        SightingBatch(gateway: gateway, boot: "b", seq: UInt64(start) + 1, start: start, end: start + 1, sightings: entries)
    }

    /// Device a enters r0 at 0.5; g0 then only sends `heartbeat` (if any); device b is heard by g1
    /// at 35.5, after a's exit deadline (30.5). Returns the outputs and the feed.
    func run(heartbeat: Bool) throws -> (out: [FusionOutput], feed: EngineFeed, handles: [DeviceHandle], engine: FusionEngine) {
        var engine = FusionEngine(site: try Venue.line(2))
        var feed = EngineFeed()
        var out: [FusionOutput] = []
        var handles: [DeviceHandle] = []
        feed.feed(batch("g0", window: 0, [entry(a, at: 0.5)]), gateway: 0, &engine, into: &out, handles: &handles)
        if heartbeat { feed.feed(batch("g0", window: 20, []), gateway: 0, &engine, into: &out, handles: &handles) }
        feed.feed(batch("g1", window: 35, [entry(b, at: 35.5)]), gateway: 1, &engine, into: &out, handles: &handles)
        return (out, feed, handles, engine)
    }

    func stateIndex(_ out: [FusionOutput], _ device: DeviceID, _ region: String, _ state: RegionState) -> Int? {
        out.firstIndex { o in
            if case .state(let s) = o { return s.device == device && s.region == region && s.state == state }
            return false
        }
    }

    @Test("timers fire before the entry that reaches a new second")
    func timersBeforeTheEntry() throws {
        let (out, feed, handles, engine) = try run(heartbeat: true)
        let exitA = try #require(stateIndex(out, a, "r0", .outside), "a's exit from r0 fired")
        let enterB = try #require(stateIndex(out, b, "r1", .inside), "b entered r1")
        #expect(exitA < enterB)
        if case .state(let s) = out[exitA] { #expect(abs(s.t - 30.5) < 1e-9) }
        #expect(feed.nextTick == 36)
        var copy = engine
        #expect(handles == [copy.handle(for: b)])
    }

    @Test("an empty batch is its gateway's heartbeat")
    func emptyBatchIsAHeartbeat() throws {
        // With g0's heartbeat at 21 the gateway is alive at 30.5, so a leaves r0 (outside); without
        // it g0 has been silent for gateway_silence_s and r0 becomes unknown instead.
        let heard = try run(heartbeat: true).out
        #expect(stateIndex(heard, a, "r0", .outside) != nil && stateIndex(heard, a, "r0", .unknown) == nil)
        let silent = try run(heartbeat: false).out
        #expect(stateIndex(silent, a, "r0", .unknown) != nil && stateIndex(silent, a, "r0", .outside) == nil)
    }

    @Test("an empty batch between other gateways' batches of the same window does not split a device's second")
    func anEmptyBatchDoesNotCloseItsOwnWindow() throws {
        // The reorder stage releases batches of equal window end in the site file's gateway order,
        // so a sharded edge's empty batch (g1) can come between g0's and g2's readings of a window.
        var engine = FusionEngine(site: try Venue.line(3))
        var feed = EngineFeed()
        var out: [FusionOutput] = []
        var handles: [DeviceHandle] = []
        for w in 0..<6 {
            let start = Double(w)
            feed.feed(batch("g0", window: start, [entry(a, at: start + 0.3)]), gateway: 0, &engine, into: &out, handles: &handles)
            feed.feed(batch("g1", window: start, []), gateway: 1, &engine, into: &out, handles: &handles)
            feed.feed(batch("g2", window: start, [entry(a, at: start + 0.6)]), gateway: 2, &engine, into: &out, handles: &handles)
        }
        // Each second of evidence is closed once, with both of its readings: the pending seconds
        // (the smoothing lag's worth) are whole seconds apart.
        let device = try #require(engine.devices.first { $0.id == a })
        let pending = device.tracker.pendingTime
        #expect(!pending.isEmpty)
        #expect(zip(pending, pending.dropFirst()).allSatisfy { $1.rounded(.down) - $0.rounded(.down) == 1 }, "pending seconds \(pending)")
    }
}
