import Testing
@testable import WaymarkAggregator

@Suite struct ClockSanityTests {
    let now = 1_800_000_000.0

    @Test func aStableOffsetIsCorrectedAfterEnoughBatches() {
        var clock = ClockSanity()
        var verdicts: [ClockSanity.Verdict] = []
        for i in 0..<12 {
            // The gateway's clock is 90 s behind; delivery adds 0.1–0.3 s.
            let received = now + Double(i)
            let end = received - 90 - 0.1 - Double(i % 3) * 0.1
            verdicts.append(clock.judge(windowStart: end - 1, windowEnd: end, receivedAt: received))
        }
        #expect(verdicts.prefix(7).allSatisfy { $0 == .accept(offset: 0) })
        guard case .accept(let offset) = verdicts.last! else { Issue.record("rejected"); return }
        #expect(abs(offset - 90.2) < 0.2)
    }

    @Test func aSpoolBacklogIsNotMistakenForAnOffset() {
        var clock = ClockSanity()
        // 300 one-second windows from 5 minutes ago, resent within a second.
        for i in 0..<300 {
            let end = now - 300 + Double(i)
            let v = clock.judge(windowStart: end - 1, windowEnd: end, receivedAt: now + Double(i) * 0.003)
            #expect(v == .accept(offset: 0))
        }
        #expect(clock.offset == 0)
    }

    @Test func unsetClocksAndFutureTimesAreRejected() {
        var clock = ClockSanity()
        #expect(clock.judge(windowStart: 10, windowEnd: 11, receivedAt: now) == .reject)  // 1970
        var fast = ClockSanity()
        #expect(fast.judge(windowStart: now + 59, windowEnd: now + 60, receivedAt: now) == .reject)
        var old = ClockSanity()
        #expect(old.judge(windowStart: now - 9 * 86_400, windowEnd: now - 9 * 86_400 + 1, receivedAt: now) == .reject)
        var fine = ClockSanity()
        #expect(fine.judge(windowStart: now - 2, windowEnd: now - 1, receivedAt: now) == .accept(offset: 0))
    }

    @Test func aGatewayRunningAheadIsCorrectedOnceStable() {
        var clock = ClockSanity()
        var last: ClockSanity.Verdict = .reject
        var rejected = 0
        for i in 0..<10 {
            let received = now + Double(i)
            let v = clock.judge(windowStart: received + 29, windowEnd: received + 30, receivedAt: received)
            if v == .reject { rejected += 1 }
            last = v
        }
        #expect(rejected == 7)  // until 8 samples agree, 30 s in the future is implausible
        #expect(last == .accept(offset: -30))
    }
}
