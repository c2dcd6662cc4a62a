import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// The tracker models a device of a region as reading from the region's core: the disc around its
/// position out to its radius, or to half-way to the nearest other region if that is nearer
/// (`TrackerTables.coreRadii`). So how generously radii are drawn does not change what it expects.
@Suite struct RegionCoreTests {
    /// A corridor drawn as Core Location draws beacon regions, around each gateway: the end region
    /// `end` reaches 8 m from its gateway, over the gateway of `next` 2.5 m away; `far` 7.5 m
    /// beyond `next`; `away` 20 m from everything.
    static func corridor(radii: [String: Double]) throws -> Site {
        try Venue.site(gateways: [("gEnd", 0, 0), ("gNext", -2.5, 0), ("gFar", -10, 0), ("gAway", -30, 0)],
                       regions: [("end", ["gEnd"]), ("next", ["gNext"]), ("far", ["gFar"]), ("away", ["gAway"])],
                       edges: [("end", "next"), ("next", "far"), ("far", "away")], radius: 3, fusion: "",
                       radii: radii)
    }

    @Test func aRegionsCoreReachesHalfWayToItsNearestNeighbour() throws {
        let site = try Self.corridor(radii: ["end": 8, "next": 3.75, "far": 4])
        let core = TrackerTables.coreRadii(site)
        let expected: [String: Double] = ["end": 1.25, "next": 1.25, "far": 3.75, "away": 3]
        for (id, value) in expected {
            #expect(abs(core[site.regionIndex(id)!] - value) < 1e-9, "\(id): \(core[site.regionIndex(id)!])")
        }
        // The table is the mean over the core.
        let tables = FusionEngine(site: site).ctx.tracker, G = tables.gatewayCount
        let end = site.regionIndex("end")!, gNext = site.gatewayIndex("gNext")!
        let h2 = EvidenceModel.antennaHeightM * EvidenceModel.antennaHeightM
        #expect(tables.logDistance[end * G + gNext] == Float(TrackerTables.meanLogDistance(centre: 2.5, radius: 1.25, height2: h2)))
    }

    @Test func radiiDrawnPastHalfWayChangeNothingTheTrackerExpects() throws {
        // The same corridor with every radius at half-way, with the radii of cells reaching their
        // far ends, and with 3 m everywhere: the same expected readings (over the whole disc, as
        // before the core, the end region's expected reading from its own gateway differed by about
        // 6 dB between the first two).
        let drawings: [[String: Double]] = [
            ["end": 1.25, "next": 1.25, "far": 3.75, "away": 3],
            ["end": 8, "next": 3.75, "far": 4, "away": 3],
            ["end": 3, "next": 3, "far": 3.75, "away": 3],
        ]
        let tables = try drawings.map { FusionEngine(site: try Self.corridor(radii: $0)).ctx.tracker.logDistance }
        #expect(tables[1] == tables[0])
        #expect(tables[2] == tables[0])
        // A radius drawn inside half-way still counts: the device is expected nearer its gateway.
        let small = FusionEngine(site: try Self.corridor(radii: ["end": 0.5, "next": 3.75, "far": 4])).ctx.tracker
        let site = try Self.corridor(radii: [:])
        let end = site.regionIndex("end")!, gEnd = site.gatewayIndex("gEnd")!, G = small.gatewayCount
        // (0.9 dB louder from its own gateway: a 0.5-m core against 1.25 m, the antenna 1 m up.)
        #expect(small.logDistance[end * G + gEnd] > tables[0][end * G + gEnd] + 0.8)
    }
}
