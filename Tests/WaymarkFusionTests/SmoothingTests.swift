import Testing
import Foundation
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

/// The filter's window moved out of line (memory: issue 14's per-device budget); its encoded form
/// must stay what checkpoints already hold.
@Suite struct RSSIFilterLayoutTests {
    /// The filter as it was laid out before: the window inline, always encoded.
    struct InlineWindowFilter: Codable, Equatable {
        var level: Float
        var variance: Float
        var run: Int32
        var lastTime: Double
        var window: TrimmedWindow
    }

    static let kalman = RSSIFilter.Tuning(processNoise: 6, measurementNoise: 25, gateSquared: 9, maxRun: 3, staleness: 10)
    static let trimmed = RSSIFilter.Tuning(processNoise: 6, measurementNoise: 25, gateSquared: 9, maxRun: 3, staleness: 10, trimmedWindow: 2)

    static func fed(_ tuning: RSSIFilter.Tuning) -> RSSIFilter {
        var f = RSSIFilter()
        for (i, r) in [-70, -72, -69, -90, -71].enumerated() { _ = f.update(rssi: Float(r), weight: 1, at: 100 + Double(i) * 0.3, tuning: tuning) }
        return f
    }

    @Test(arguments: [false, true])
    func encodesAsTheInlineLayoutDidAndDecodesIt(trimmedMean: Bool) throws {
        let filter = Self.fed(trimmedMean ? Self.trimmed : Self.kalman)
        #expect(MemoryLayout<RSSIFilter>.size <= 32)
        #expect(filter.window.isEmpty == !trimmedMean)
        // Through the old layout's type: the same fields, so the same bytes in both formats.
        let binary = try CompactBinaryEncoder().encode(filter)
        let old = try CompactBinaryDecoder().decode(InlineWindowFilter.self, from: binary)
        #expect(try CompactBinaryEncoder().encode(old) == binary)
        #expect(old.level == filter.level && old.lastTime == filter.lastTime && old.window == filter.window)
        #expect(try CompactBinaryDecoder().decode(RSSIFilter.self, from: binary) == filter)
        let json = try JSONEncoder().encode(filter)
        #expect(try JSONDecoder().decode(InlineWindowFilter.self, from: json) == old)
        #expect(try JSONDecoder().decode(RSSIFilter.self, from: json) == filter)
    }

    @Test func aRestoredTrimmedWindowGoesOnAveragingItsReadings() throws {
        var restored = try CompactBinaryDecoder().decode(RSSIFilter.self, from: CompactBinaryEncoder().encode(Self.fed(Self.trimmed)))
        var uninterrupted = Self.fed(Self.trimmed)
        _ = restored.update(rssi: -68, weight: 1, at: 101.6, tuning: Self.trimmed)
        _ = uninterrupted.update(rssi: -68, weight: 1, at: 101.6, tuning: Self.trimmed)
        #expect(restored == uninterrupted)
        // −90 is trimmed away: the mean of the middle four of −70, −72, −69, −90, −71, −68.
        #expect(abs(restored.level - (-70.5)) < 0.01)
    }
}
