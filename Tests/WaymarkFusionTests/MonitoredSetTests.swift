import Testing
import WaymarkCore
@testable import WaymarkFusion

@Suite struct MonitoredSetTests {
    /// 25 × 21 = 525 regions, 10 m apart, whose level the site file gives: these tests are about
    /// which regions the set holds, not about the engine's first minute in a venue whose level it
    /// has yet to learn (then a set may first form around a farther gateway: `VenueLevelTests`).
    static let venue = Result { try Venue.grid(cols: 25, rows: 21, levelKnown: true) }

    /// Hears the device from every gateway within 15 m of (x, y).
    static func hearAround(_ x: Double, _ y: Double) -> (inout Driver) -> Void {
        { d in
            d.heartbeat()
            let cx = Int((x / 10).rounded()), cy = Int((y / 10).rounded())
            for gx in max(0, cx - 1)...min(24, cx + 1) {
                for gy in max(0, cy - 1)...min(20, cy + 1) {
                    let dist = ((x - Double(gx) * 10) * (x - Double(gx) * 10) + (y - Double(gy) * 10) * (y - Double(gy) * 10)).squareRoot()
                    if dist <= 15 { d.hear("g\(gx)_\(gy)", rssi: rssi(atDistance: max(0.5, dist))) }
                }
            }
        }
    }

    @Test func setIsTheCurrentRegionAndItsNearestNeighbours() throws {
        var d = Driver(try Self.venue.get())
        d.run(for: 3, Self.hearAround(120, 100))
        let set = try #require(d.monitored.last)
        #expect(set.regions.count == 20)
        #expect(set.regions.first == "r12_10")
        // The four neighbours at 10 m come right after the centre.
        #expect(Set(set.regions[1...4]) == ["r11_10", "r13_10", "r12_9", "r12_11"])
    }

    @Test func setRotatesAsTheDeviceWalksAndStateStaysBounded() throws {
        var d = Driver(try Self.venue.get())
        var x = 0.0
        d.run(for: 3, Self.hearAround(0, 50))
        // Walk along y = 50 m at 1 m/s across the whole venue.
        while x < 240 {
            x += 1
            d.run(for: 1, step: 0.5, Self.hearAround(x, 50))
            #expect(d.deviceState.slots.count <= 20)
            #expect(d.deviceState.links.count <= 20)
        }
        let path = d.locations.compactMap(\.region)
        #expect(path.first == "r0_5" && path.last == "r24_5")
        #expect(path.count >= 20)
        #expect(d.transitions.allSatisfy { !$0.inferred }, "a walk between neighbours needs no inferred visits")
        // One rotation per change of current region, each centred on the new region.
        #expect(d.monitored.count == path.count)
        for (m, region) in zip(d.monitored, path) { #expect(m.regions.first == region && m.regions.count == 20) }
        #expect(d.deviceState.footprintBytes <= 4096)
    }

    @Test func heardStronglyOnlyOutsideTheSetIsReacquired() throws {
        var d = Driver(try Self.venue.get())
        d.run(for: 5, Self.hearAround(0, 0))
        #expect(d.locations.last?.region == "r0_0")
        #expect(!(d.monitored.last?.regions.contains("r20_15") ?? true))
        // The device reappears far away (e.g. the gateways between were down): only gateways
        // outside its monitored set hear it.
        let start = d.now
        d.run(for: 3, Self.hearAround(200, 150))
        #expect(d.locations.last?.region == "r0_0", "not before reacquire_s (5 s) of persistent evidence")
        d.run(for: 5, Self.hearAround(200, 150))
        let loc = try #require(d.locations.last)
        #expect(loc.region == "r20_15")
        #expect(try #require(d.locationReports.last?.at) >= start + 5)
        #expect(d.monitored.last?.regions.first == "r20_15")
        // The jump is recorded along the shortest path (35 steps on the grid → 34 inferred regions).
        #expect(d.visits.filter(\.inferred).count == 34)
        #expect(d.deviceState.slots.count == 20)
    }

    @Test func deviceWithNoCurrentRegionIsAcquiredAtOnce() throws {
        var d = Driver(try Self.venue.get())
        d.run(for: 5, Self.hearAround(0, 0))
        d.run(for: 40) { $0.heartbeat() }
        #expect(d.locations.last?.region == nil)
        let back = d.now + 1
        d.run(for: 1, Self.hearAround(150, 150))
        // Its set is rebuilt there at once and the live region follows when the second closes;
        // the recorded entry comes after the smoothing lag, dated at the first evidence.
        #expect(d.monitored.last?.regions.first == "r15_15")
        d.run(for: 4, Self.hearAround(150, 150))
        // The first live line after the return is there, when its first second closes (the filter
        // starts undecided over the new set, so later lines follow as its confidence grows).
        let firstLive = try #require(d.lives.first { $0.t >= back })
        #expect(firstLive.region == "r15_15" && firstLive.t == back)
        #expect(d.lives.last?.region == "r15_15")
        #expect(d.locations.last?.region == "r15_15")
        #expect(d.locations.last?.t == back)
        #expect(d.visits.filter(\.inferred).isEmpty)
    }

    @Test func configuredSetSizeIsUsed() throws {
        var d = Driver(try Venue.grid(cols: 10, rows: 10, fusion: "monitored_set_size: 5"))
        d.run(for: 2) { d in d.heartbeat(); d.hear("g5_5", rssi: rssi(atDistance: 1)) }
        #expect(d.monitored.last?.regions.count == 5)
        #expect(d.deviceState.slots.count == 5)
    }
}
