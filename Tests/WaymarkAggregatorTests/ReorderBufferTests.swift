import Foundation
import Testing
import WaymarkCore
@testable import WaymarkAggregator

@Suite struct ReorderBufferTests {
    @Test func releasesInWindowOrderOnceEveryActiveSourceHasPassed() {
        var r = ReorderBuffer<String>(maxLatenessS: 2)
        #expect(r.insert("a10", source: "a", windowEnd: 10, at: 100) == ["a10"])  // only source: its own end is the watermark
        #expect(r.insert("b9", source: "b", windowEnd: 9, at: 100.1) == ["b9"])  // behind a10, but nothing held: late
        #expect(r.late == 1)
        #expect(r.insert("a10.5", source: "a", windowEnd: 10.5, at: 100.2) == [])  // b is at 9
        #expect(r.insert("a11", source: "a", windowEnd: 11, at: 100.3) == [])
        #expect(r.insert("b10.2", source: "b", windowEnd: 10.2, at: 100.4) == ["b10.2"])  // watermark 10.2
        #expect(r.count == 2)
        #expect(r.insert("b11.5", source: "b", windowEnd: 11.5, at: 100.5) == ["a10.5", "a11"])  // watermark 11 now
        #expect(r.watermark(at: 100.5) == 11)
        #expect(r.releaseAll() == ["b11.5"])
        #expect(r.late == 1)
    }

    @Test func aStalledSourceBlocksNoLongerThanTheWindow() {
        var r = ReorderBuffer<String>(maxLatenessS: 2)
        _ = r.insert("slow1", source: "slow", windowEnd: 1, at: 0)
        #expect(r.insert("fast2", source: "fast", windowEnd: 2, at: 0.5) == [])
        #expect(r.insert("fast3", source: "fast", windowEnd: 3, at: 1.0) == [])
        #expect(r.release(at: 1.9) == [])  // slow (at 1) still counts
        #expect(r.release(at: 2.1) == [])  // silent for 2.1 s, but only 2 s behind: still counts
        // Silent and more than 2 s behind the others: out; fast's own end (4) is the watermark.
        #expect(r.insert("fast4", source: "fast", windowEnd: 4, at: 2.2) == ["fast2", "fast3", "fast4"])
        #expect(r.count == 0)
        // Back from its stall, the slow source's old evidence still goes in, counted as late.
        #expect(r.insert("slow2", source: "slow", windowEnd: 2, at: 3) == ["slow2"])
        #expect(r.late == 1)
    }

    @Test func noItemIsHeldLongerThanTheWindowEvenBehindAnActiveSource() {
        var r = ReorderBuffer<String>(maxLatenessS: 2)
        _ = r.insert("a1", source: "a", windowEnd: 1, at: 0)
        #expect(r.insert("b3", source: "b", windowEnd: 3, at: 0) == [])
        #expect(r.insert("a1.5", source: "a", windowEnd: 1.5, at: 1.5) == ["a1.5"])  // watermark min(1.5, 3)
        #expect(r.insert("a2", source: "a", windowEnd: 2, at: 1.8) == ["a2"])
        #expect(r.release(at: 1.9) == [])  // b3 waits: a (active) is at 2
        #expect(r.release(at: 2.0) == ["b3"])  // held 2 s: released although a is behind
    }

    @Test func aPauseOfTheWholeStreamChangesNothing() {
        // Both sources go quiet for 10 s (a broker outage, an aggregator restart) and come back:
        // the order is that of the window ends, as without the pause.
        func run(pause: Double) -> [String] {
            var r = ReorderBuffer<String>(maxLatenessS: 2)
            var out = r.insert("a1", source: "a", windowEnd: 1, at: 0) + r.insert("b1", source: "b", windowEnd: 1, at: 0.1)
            out += r.insert("a2", source: "a", windowEnd: 2, at: 1 + pause)
            out += r.insert("a3", source: "a", windowEnd: 3, at: 1.1 + pause)
            out += r.insert("b2", source: "b", windowEnd: 2, at: 1.2 + pause)
            out += r.insert("b3", source: "b", windowEnd: 3, at: 1.3 + pause)
            return out + r.releaseAll()
        }
        #expect(run(pause: 0) == ["a1", "b1", "a2", "b2", "a3", "b3"])
        #expect(run(pause: 10) == run(pause: 0))
    }

    @Test func aRestoredSourceHoldsTheWatermarkWhereItStood() {
        var r = ReorderBuffer<String>(maxLatenessS: 2)
        r.restore(source: "a", latestEnd: 10, online: true)
        r.restore(source: "b", latestEnd: 10, online: true)
        #expect(r.insert("b11", source: "b", rank: 1, windowEnd: 11, at: 100) == [])  // a stood at 10
        #expect(r.insert("a11", source: "a", rank: 0, windowEnd: 11, at: 100.1) == ["a11", "b11"])  // equal ends: by rank
        // An older window from b still comes after b's own earlier items; nothing is held for it.
        #expect(r.insert("b9", source: "b", windowEnd: 9, at: 100.2) == ["b9"])
        #expect(r.count == 0)
    }

    @Test func aSourceCatchingUpHoldsTheWatermarkUntilItsDeadline() {
        var r = ReorderBuffer<String>(maxLatenessS: 2)
        _ = r.insert("a1", source: "a", windowEnd: 1, at: 0)
        _ = r.insert("b1", source: "b", windowEnd: 1, at: 0)
        r.holdForCatchUp("a", until: 15)
        #expect(r.insert("b5", source: "b", windowEnd: 5, at: 1) == [])
        #expect(r.release(at: 5) == [])  // held past the 2 s bound: a catches up
        r.caughtUp("a")
        #expect(r.insert("a6", source: "a", windowEnd: 6, at: 6) == ["b5"])
        r.holdForCatchUp("b", until: 20)
        #expect(r.insert("a7", source: "a", windowEnd: 7, at: 7) == [])
        #expect(r.release(at: 19.9) == [])
        #expect(r.release(at: 20) == ["a6", "a7"])  // b never came: the wait ends, counted
        #expect(r.catchUpTimeouts == 1)
    }

    @Test func anEventIsReleasedAtItsTimeWithoutMovingItsSource() {
        // A status of b at 2.5 goes between the batches ending at 2 and 3, however early it arrives,
        // and says nothing of b's evidence: b (at 1) still holds the watermark.
        func run(statusFirst: Bool) -> [String] {
            var r = ReorderBuffer<String>(maxLatenessS: 5)
            var out = r.insert("a1", source: "a", windowEnd: 1, at: 0) + r.insert("b1", source: "b", windowEnd: 1, at: 0)
            if statusFirst { out += r.insertEvent("b-status", source: "b", time: 2.5, at: 0.1) }
            out += r.insert("a2", source: "a", windowEnd: 2, at: 0.2) + r.insert("a3", source: "a", windowEnd: 3, at: 0.3)
            #expect(r.watermark(at: 0.3) == 1)
            out += r.insert("b2", source: "b", windowEnd: 2, at: 0.4)
            if !statusFirst { out += r.insertEvent("b-status", source: "b", time: 2.5, at: 0.5) }
            out += r.insert("b3", source: "b", windowEnd: 3, at: 0.6)
            return out + r.releaseAll()
        }
        #expect(run(statusFirst: true) == ["a1", "b1", "a2", "b2", "b-status", "a3", "b3"])
        #expect(run(statusFirst: false) == run(statusFirst: true))
        // An event older than what was released goes at once.
        var r = ReorderBuffer<String>(maxLatenessS: 5)
        _ = r.insert("a4", source: "a", windowEnd: 4, at: 0)
        #expect(r.insertEvent("old", source: "b", time: 3, at: 1) == ["old"])
    }

    @Test func aSourceCatchingUpHasCaughtUpOnlyOnceItsEvidenceReachesTheOthers() {
        var r = ReorderBuffer<String>(maxLatenessS: 2)
        r.restore(source: "a", latestEnd: 10, online: true)
        r.restore(source: "b", latestEnd: 10, online: true)
        r.holdForCatchUp("a", until: 100)
        r.holdForCatchUp("b", until: 100)
        _ = r.insert("a11", source: "a", windowEnd: 11, at: 50)
        _ = r.insert("a20", source: "a", windowEnd: 20, at: 50)
        r.progressed("a")  // the leader
        #expect(r.insert("b11", source: "b", windowEnd: 11, at: 50.1) == ["a11", "b11"])
        r.progressed("b")  // 9 s behind a: its backlog is still coming
        #expect(r.catchingUp == 1)
        // Without the hold, b (more than 2 s behind) would drop out and a20 go before b12.
        #expect(r.insert("b12", source: "b", windowEnd: 12, at: 50.2) == ["b12"])
        #expect(r.insert("b19", source: "b", windowEnd: 19, at: 50.3) == ["b19"])
        r.progressed("b")
        #expect(r.catchingUp == 0)
        #expect(r.release(at: 50.4) == [])  // b, now active at 19, still holds a20
        #expect(r.releaseAll() == ["a20"])
        #expect(r.late == 0 && r.catchUpTimeouts == 0)
    }

    @Test func anOfflineSourceDoesNotHoldTheWatermark() {
        var r = ReorderBuffer<String>(maxLatenessS: 5)
        _ = r.insert("a1", source: "a", windowEnd: 1, at: 0)
        #expect(r.insert("b4", source: "b", windowEnd: 4, at: 0.1) == [])
        r.setOnline("a", false)
        #expect(r.release(at: 0.2) == ["b4"])
    }

    @Test func aSourcesItemsKeepTheirOrderAndMarkersWaitBehindThem() {
        var r = ReorderBuffer<String>(maxLatenessS: 2)
        _ = r.insert("b1", source: "b", windowEnd: 1, at: 0)
        #expect(r.insert("a2.5", source: "a", windowEnd: 2.5, at: 0) == [])
        #expect(r.isHolding("a") && !r.isHolding("b"))
        #expect(r.insert("a-mark", source: "a", windowEnd: nil, at: 0.1) == [])
        #expect(r.insert("a2", source: "a", windowEnd: 2, at: 0.2) == [])  // earlier window, but after a2.5 in a's sequence
        #expect(r.insert("b3", source: "b", windowEnd: 3, at: 0.3) == ["a2.5", "a-mark", "a2"])
        #expect(r.late == 0)
    }

    @Test func zeroWindowReleasesInArrivalOrder() {
        var r = ReorderBuffer<Int>(maxLatenessS: 0)
        #expect(r.insert(1, source: "a", windowEnd: 10, at: 0) == [1])
        #expect(r.insert(2, source: "b", windowEnd: 5, at: 0) == [2])
        #expect(r.count == 0)
    }
}

@Suite struct AggregatorReorderTests {
    let topics = Topics(site: "line")

    func core(window: Double) throws -> AggregatorCore {
        var settings = AggregatorCore.Settings(clock: .recorded)
        settings.reorderWindowS = window
        return AggregatorCore(site: try LineVenue.site(count: 4, monitored: 20), topics: topics, settings: settings)
    }

    func send(_ c: inout AggregatorCore, _ gw: String, seq: UInt64, end: Double, at t: Double) throws -> AggregatorCore.Outcome {
        let b = SightingBatch(gateway: gw, boot: "b", seq: seq, start: end - 1, end: end, sightings: [])
        return c.handle(topic: topics.sightings(gw), payload: Array(try JSONEncoder().encode(b)), receivedAt: t)
    }

    /// The live regions in the device states published now.
    func liveRegions(_ c: inout AggregatorCore) throws -> [String] {
        try c.takePublications().filter { $0.topic.hasSuffix("/state") }.compactMap { p in
            try (JSONSerialization.jsonObject(with: Data(p.payload)) as? [String: Any])?["current_region"] as? String
        }
    }

    @Test func aDevicesSecondClosesOnceEveryGatewaysWindowIsInNotAtTheNextWindow() throws {
        // Window [t0, t0 + 1): gw-0 hears the device loudly, the others send empty batches (as
        // edges on a live radio do). Once the last of them is in, the watermark is at t0 + 1 and
        // the device's second is complete: its live region goes out with it.
        let t0 = 1_700_000_100.0
        let device = LineVenue.device(0)
        for window in [2.0, 0] {
            var c = try core(window: window)
            for g in 0...3 { _ = try send(&c, "gw-\(g)", seq: 1, end: t0, at: t0 + 0.1) }  // every gateway is known
            let loud = SightingBatch(gateway: "gw-0", boot: "b", seq: 2, start: t0, end: t0 + 1, sightings: [
                .init(device: device, count: 5, rssiMax: -50, rssiMean: -52, rssiLast: -52, tx: -59, first: t0 + 0.1, last: t0 + 0.4),
            ])
            _ = c.handle(topic: topics.sightings("gw-0"), payload: Array(try JSONEncoder().encode(loud)), receivedAt: t0 + 1.05)
            for g in 1...2 { _ = try send(&c, "gw-\(g)", seq: 2, end: t0 + 1, at: t0 + 1.1) }
            #expect(try liveRegions(&c).isEmpty, "gw-3's window is not in yet (reorder window \(window) s)")
            _ = try send(&c, "gw-3", seq: 2, end: t0 + 1, at: t0 + 1.2)
            if window > 0 {
                #expect(try liveRegions(&c) == ["r0"], "every window is in: the second closed")
            } else {
                // Without the reorder stage nothing says the second is complete: it waits for the
                // next window's evidence.
                #expect(try liveRegions(&c).isEmpty)
                _ = try send(&c, "gw-0", seq: 3, end: t0 + 2, at: t0 + 2.05)
                #expect(try liveRegions(&c) == ["r0"])
            }
        }
    }

    @Test func heldBatchesAreNeitherMarkedNorAckedUntilReleased() throws {
        var c = try core(window: 2)
        let t0 = 1_700_000_100.0
        #expect(try send(&c, "gw-0", seq: 1, end: t0, at: t0) == .accepted(sightings: 0))
        #expect(try send(&c, "gw-1", seq: 1, end: t0 - 1, at: t0) == .accepted(sightings: 0))  // late: goes in
        #expect(try send(&c, "gw-0", seq: 2, end: t0 + 0.5, at: t0 + 0.5) == .accepted(sightings: 0))  // held: gw-1 is at t0 − 1
        #expect(c.heldBatches == 1)
        // A resend of the held batch is a duplicate (not held twice), without an ack.
        #expect(try send(&c, "gw-0", seq: 2, end: t0 + 0.5, at: t0 + 0.6) == .duplicate(gateway: "gw-0", ack: nil))
        let sealedFirst = c.sealWrite()
        let first = try #require(sealedFirst)
        #expect(first.progress == [.init(gateway: "gw-0", boot: "b"): 1, .init(gateway: "gw-1", boot: "b"): 1])
        c.releaseDue(at: t0 + 2.5)
        #expect(c.heldBatches == 0)
        let sealedSecond = c.sealWrite()
        let second = try #require(sealedSecond)
        #expect(second.progress == [.init(gateway: "gw-0", boot: "b"): 2])
        #expect(c.lateBatches == 1)
    }

    @Test func aRejectedBatchBehindHeldOnesIsMarkedAfterThem() throws {
        var c = try core(window: 2)
        let t0 = 1_700_000_100.0
        _ = try send(&c, "gw-1", seq: 1, end: t0 - 1, at: t0)
        #expect(try send(&c, "gw-0", seq: 1, end: t0, at: t0) == .accepted(sightings: 0))  // held
        let bad = SightingBatch(gateway: "gw-0", boot: "b", seq: 2, start: t0 + 5, end: t0, sightings: [])
        #expect(c.handle(topic: topics.sightings("gw-0"), payload: Array(try JSONEncoder().encode(bad)), receivedAt: t0)
                == .rejected(.badTimes, gateway: "gw-0"))
        let sealedFirst = c.sealWrite()
        let first = try #require(sealedFirst)
        #expect(first.progress[.init(gateway: "gw-0", boot: "b")] == nil)
        c.releaseAll()
        let sealedSecond = c.sealWrite()
        let second = try #require(sealedSecond)
        #expect(second.progress == [.init(gateway: "gw-0", boot: "b"): 2])
    }
}
