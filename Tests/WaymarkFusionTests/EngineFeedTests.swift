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

    /// Windows of three gateways along a line, device a walking from r0 to r2 and b standing at r1,
    /// with seconds where nobody is heard (a: 20–27, both: 40–44) and gateway g2 sending an empty
    /// batch now and then.
    func windows() -> [[(gateway: Int, batch: SightingBatch)]] {
        var out: [[(gateway: Int, batch: SightingBatch)]] = []
        for w in 0..<70 where !(40..<45).contains(w) {
            let start = Double(w)
            var window: [(gateway: Int, batch: SightingBatch)] = []
            let aAt = w < 20 ? 0 : (w < 28 ? -1 : (w < 55 ? 1 : 2))
            for g in 0..<3 {
                var entries: [SightingBatch.Entry] = []
                if aAt == g { entries.append(entry(a, at: start + 0.2 + 0.1 * Double(g))) }
                if g == 1 { entries.append(entry(b, at: start + 0.7)) }
                if !entries.isEmpty || (g == 2 && w % 3 == 0) { window.append((g, batch("g\(g)", window: start, entries))) }
            }
            out.append(window)
        }
        return out
    }

    @Test("closing each window at the watermark changes nothing but when: same outputs, same state, as feeding alone")
    func closingAtTheWatermarkIsTheReplaysFeed() throws {
        // The aggregator closes each window once every gateway's batch of it is fused
        // (`EngineFeed.close`); `waymark replay` only feeds. The engine must see the same calls.
        var replayed = FusionEngine(site: try Venue.line(3)), live = replayed
        var replayFeed = EngineFeed(), liveFeed = EngineFeed()
        var replayOut: [FusionOutput] = [], liveOut: [FusionOutput] = [], handles: [DeviceHandle] = []
        var closedEarly = 0
        for window in windows() {
            for (g, b) in window {
                replayFeed.feed(b, gateway: g, &replayed, into: &replayOut, handles: &handles)
                liveFeed.feed(b, gateway: g, &live, into: &liveOut, handles: &handles)
            }
            let before = liveOut.count
            liveFeed.close(&live, through: window[0].batch.end, into: &liveOut)
            if liveOut.count > before { closedEarly += 1 }
        }
        // One more reading after a pause: the replay's feed stops at the end of the last second with
        // evidence first, where the live feed was closed already.
        let last = batch("g1", window: 75, [entry(b, at: 75.5)])
        replayFeed.feed(last, gateway: 1, &replayed, into: &replayOut, handles: &handles)
        liveFeed.feed(last, gateway: 1, &live, into: &liveOut, handles: &handles)
        #expect(closedEarly > 10, "the watermark closed seconds with output \(closedEarly) times")
        #expect(liveOut == replayOut)
        #expect(live.checkpoint() == replayed.checkpoint())
        #expect(live.calibration == replayed.calibration)
    }

    @Test("a device's second closes when its window is closed, not at the next second's first reading")
    func closeEndsTheSecond() throws {
        var engine = FusionEngine(site: try Venue.line(2))
        var feed = EngineFeed()
        var out: [FusionOutput] = [], handles: [DeviceHandle] = []
        feed.feed(batch("g0", window: 0, [entry(a, at: 0.4)]), gateway: 0, &engine, into: &out, handles: &handles)
        #expect(engine.devices.first { $0.id == a }?.tracker.hasOpenSecond == true)
        feed.close(&engine, through: 1, into: &out)
        #expect(engine.devices.first { $0.id == a }?.tracker.hasOpenSecond == false)
        #expect(out.contains { if case .live(let l) = $0 { return l.device == a } else { return false } }, "the live region is out")
        #expect(feed.nextTick == 2)
        // Closing again, or a reading of the next second, does not advance again before second 2.
        let count = out.count
        feed.close(&engine, through: 1.5, into: &out)
        #expect(out.count == count && feed.nextTick == 2)
    }
}

