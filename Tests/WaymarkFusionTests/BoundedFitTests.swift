import Foundation
import Testing
@testable import WaymarkFusion

/// The self-calibration's path-loss exponent and room loss within their ranges
/// (`VenueCalibration.boundedFit`): the least-squares optimum over the box, not each free value
/// clamped on its own.
@Suite struct BoundedFitTests {
    typealias C = VenueCalibration

    /// Twice the least-squares objective, up to a constant.
    static func cost(_ s: (a: Double, b: Double, c: Double, u: Double, v: Double), _ n: Double, _ w: Double) -> Double {
        s.a * n * n + 2 * s.b * n * w + s.c * w * w - 2 * (s.u * n + s.v * w)
    }

    /// Normal equations whose free solution is (n, w), with curvature a, c and coupling b.
    static func system(n: Double, w: Double, a: Double, b: Double, c: Double) -> (a: Double, b: Double, c: Double, u: Double, v: Double) {
        (a, b, c, a * n + b * w, b * n + c * w)
    }

    @Test func aFreeSolutionWithinBothRangesIsKept() {
        let s = Self.system(n: 2.2, w: 6, a: 40, b: 12, c: 9)
        let fit = C.boundedFit(a: s.a, b: s.b, c: s.c, u: s.u, v: s.v, det: s.a * s.c - s.b * s.b)
        #expect(abs(fit.n - 2.2) < 1e-9 && abs(fit.w - 6) < 1e-9)
    }

    @Test func anExponentBelowItsRangeRefitsTheRoomLossGivenTheBound() {
        // Readings that fall off slowly (n 1.2) with some walls: at the exponent's bound (1.6) the
        // walls that best fit are fewer than the free fit's, since the two are correlated (b > 0).
        let s = Self.system(n: 1.2, w: 4.7, a: 40, b: 12, c: 9)
        let fit = C.boundedFit(a: s.a, b: s.b, c: s.c, u: s.u, v: s.v, det: s.a * s.c - s.b * s.b)
        #expect(fit.n == C.exponentRange.lowerBound)
        #expect(abs(fit.w - (s.v - s.b * 1.6) / s.c) < 1e-9, "\(fit)")
        #expect(fit.w < 4.7 - 0.5, "clamping each value alone kept 4.7 dB: \(fit)")
    }

    @Test func theFitIsTheBestPointOfTheRangesForAnySystem() {
        var rng = SeededRandom(seed: 17)
        let ns = C.exponentRange, ws = C.roomLossRange
        for _ in 0..<200 {
            let a = Double.random(in: 1...100, using: &rng), c = Double.random(in: 1...100, using: &rng)
            let b = Double.random(in: -0.95...0.95, using: &rng) * (a * c).squareRoot()
            let s = Self.system(n: Double.random(in: 0...5, using: &rng), w: Double.random(in: -8...18, using: &rng), a: a, b: b, c: c)
            let fit = C.boundedFit(a: s.a, b: s.b, c: s.c, u: s.u, v: s.v, det: s.a * s.c - s.b * s.b)
            #expect(ns.contains(fit.n) && ws.contains(fit.w), "\(fit)")
            var best = Double.infinity
            for i in 0...200 {
                for j in 0...200 {
                    let n = ns.lowerBound + (ns.upperBound - ns.lowerBound) * Double(i) / 200
                    let w = ws.lowerBound + (ws.upperBound - ws.lowerBound) * Double(j) / 200
                    best = min(best, Self.cost(s, n, w))
                }
            }
            #expect(Self.cost(s, fit.n, fit.w) <= best + 1e-9 * max(1, abs(best)), "\(s) → \(fit)")
        }
    }
}
