import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// Gateways that anchor no region (`Site.unanchoredGatewayRegions`, `Site.gatewayHomeRegions`): a
/// gateway the site file did not list under the room it hangs in is still part of the radio model
/// there — in that room (no wall), and listened to by devices monitoring it.
@Suite struct UnanchoredGatewayTests {
    /// Three 10-m rooms in a line, each with its gateway at the centre; `gx` hangs inside r0 (3 m
    /// from its centre), `gc` in no region's radius (between r1 and r2, nearer r1). `listGX` lists
    /// `gx` under r0, as the file should. The regions' centres are given: by default a region sits
    /// at its gateways' mean, and listing gx would move r0 by 1.5 m (another geometry, not the
    /// same one drawn two ways).
    static func venue(listGX: Bool, fusion: String = "") throws -> Site {
        try Venue.site(gateways: [("g0", 0, 0), ("g1", 10, 0), ("g2", 20, 0), ("gx", 3, 0), ("gc", 14.5, 0)],
                       regions: [("r0", listGX ? ["g0", "gx"] : ["g0"]), ("r1", ["g1"]), ("r2", ["g2"])],
                       edges: [("r0", "r1"), ("r1", "r2")], radius: 4, fusion: fusion, levelKnown: true,
                       centres: ["r0": (0, 0), "r1": (10, 0), "r2": (20, 0)])
    }

    @Test func anUnlistedGatewayHangsWithTheNearestRegionAndIsInItsRoomOnlyWithinItsRadius() throws {
        let site = try Self.venue(listGX: false)
        let gx = site.gatewayIndex("gx")!, gc = site.gatewayIndex("gc")!
        let placed = site.unanchoredGatewayRegions()
        #expect(placed.map(\.gateway) == [gx, gc])
        #expect(placed.map(\.region) == [0, 1])
        #expect(placed.map(\.withinRadius) == [true, false])
        #expect(site.gatewayHomeRegions[gx] == [0])
        #expect(site.gatewayHomeRegions[gc] == [])
        #expect(site.gatewayHomeRegions[site.gatewayIndex("g1")!] == [1])

        let ctx = FusionContext(site: site)
        let G = ctx.tracker.gatewayCount
        #expect(ctx.tracker.otherRoom[0 * G + gx] == 0, "gx hangs in r0's room")
        #expect(ctx.tracker.otherRoom[1 * G + gx] == 1)
        #expect(ctx.tracker.otherRoom[1 * G + gc] == 1, "outside every radius: behind a wall from every region")
        #expect(ctx.regionListeners[0] == [Int32(site.gatewayIndex("g0")!), Int32(gx)])
        #expect(ctx.regionListeners[1] == [Int32(site.gatewayIndex("g1")!), Int32(gc)])
        // Core Location's region state still comes from the region's own gateways.
        #expect(ctx.regionGateways[0] == [Int32(site.gatewayIndex("g0")!)])
    }

    @Test func leavingAGatewayOutOfItsRoomsListChangesNothingTheTrackerRecords() throws {
        // The same readings through the site as it should be (gx listed under r0) and as drawn
        // with gx left out: the tracker's tables are the same, so the recorded path and the times
        // of its moves are too, and every live region with its probability, with the venue's
        // radio learned or not. Before gx was placed with r0, it counted as behind a wall from
        // every region, read hotter in r0 than the model expected, and the path differed (a move
        // recorded a second later; 3.5 points of exact accuracy on the real flat).
        func run(_ site: Site) -> [String] {
            var d = Driver(site)
            var rng = SeededRandom(seed: 5)
            // Each gateway's position and the room it hangs in (gc: a corridor, walled off from all).
            let positions: [Double] = [0, 10, 20, 3, 14.5]
            let rooms = [0, 1, 2, 0, -1]
            d.run(for: 1200, step: 0.5) { d in
                d.heartbeat()
                let t = d.now - 1000
                let phase = t.truncatingRemainder(dividingBy: 160)
                let x = phase < 80 ? phase * 0.25 : 20 - (phase - 80) * 0.25
                let room = x < 5 ? 0 : x < 15 ? 1 : 2
                for (g, id) in ["g0", "g1", "g2", "gx", "gc"].enumerated() {
                    let wall = rooms[g] == room ? 0.0 : 5.0
                    let v = rssi(atDistance: max(0.5, abs(positions[g] - x))) - wall + rng.gaussian(sigma: 3)
                    if v > -95 { d.hear(id, rssi: v, tx: -59) }
                }
            }
            return d.locations.map { "\($0.region ?? "-") at \($0.t - 1000)" }
                + d.lives.map { "live \($0.region ?? "-") at \($0.t - 1000) p \($0.confidence ?? -1)" }
        }
        for fusion in ["", "self_calibration: false"] {
            let listed = run(try Self.venue(listGX: true, fusion: fusion))
            let unlisted = run(try Self.venue(listGX: false, fusion: fusion))
            #expect(listed.filter { !$0.hasPrefix("live") }.count > 10, "\(listed)")
            #expect(listed == unlisted, "\(fusion) listed: \(listed)\nunlisted: \(unlisted)")
        }
    }
}
