import Testing
import WaymarkCore
@testable import WaymarkFusion

@Suite struct SmoothingTests {
    @Test func filterFollowsARealChangeWithinAFewSeconds() throws {
        var filter = RSSIFilter()
        let tuning = RSSIFilter.Tuning(processNoise: 6, measurementNoise: 25, gateSquared: 9, maxRun: 3, staleness: 10)
        var t = 0.0
        for _ in 0..<50 { t += 0.2; _ = filter.update(rssi: -85, weight: 1, at: t, tuning: tuning) }
        #expect(abs(filter.level + 85) < 0.5)
        var settled: Double? = nil
        let step = t
        for _ in 0..<50 {
            t += 0.2
            _ = filter.update(rssi: -60, weight: 1, at: t, tuning: tuning)
            if settled == nil, abs(filter.level + 60) < 3 { settled = t - step }
        }
        let s = try #require(settled)
        #expect(s <= 3, "settled within 3 dB after \(s) s")
    }

    @Test func trimmedMeanDropsASpikeAndFollowsAStep() {
        var filter = RSSIFilter()
        let tuning = RSSIFilter.Tuning(processNoise: 6, measurementNoise: 25, gateSquared: 9, maxRun: 3, staleness: 10, trimmedWindow: 2)
        var t = 0.0
        for _ in 0..<10 { t += 0.2; _ = filter.update(rssi: -80, weight: 1, at: t, tuning: tuning) }
        t += 0.2
        _ = filter.update(rssi: -40, weight: 1, at: t, tuning: tuning)
        #expect(filter.level == -80, "a single spike is trimmed away")
        for _ in 0..<10 { t += 0.2; _ = filter.update(rssi: -60, weight: 1, at: t, tuning: tuning) }
        #expect(filter.level == -60, "after one window only the new level is left")
    }

    @Test func trimmedMeanIsSelectedInTheSiteFile() throws {
        var d = Driver(try Venue.line(2, fusion: "smoothing: trimmed_mean\ntrimmed_window_s: 3"))
        d.run(for: 5, step: 0.2) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        #expect(d.locations.map(\.region) == ["r0"])
        #expect(throws: (any Error).self) { try Venue.line(2, fusion: "smoothing: median") }
    }
}
