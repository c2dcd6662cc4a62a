import Testing
import WaymarkCore
@testable import WaymarkSimulation

@Suite("Movement and ground truth")
struct MovementTests {
    @Test("true visits follow the site's definition: within radius_m, nearest region")
    func truthOfAWalk() throws {
        let site = try TestSites.site(TestSites.line)
        // Stand at a for 10 s, walk 20 m to c at 1 m/s, stand there 10 s.
        let walk = Trajectory(waypoints: [
            .init(time: 0, position: Point(x: 0, y: 0), floor: 0),
            .init(time: 10, position: Point(x: 0, y: 0), floor: 0),
            .init(time: 30, position: Point(x: 20, y: 0), floor: 0),
            .init(time: 40, position: Point(x: 20, y: 0), floor: 0),
        ])
        let visits = GroundTruth(site: site).visits(device: 0, trajectory: walk)
        // Radius 3 m: a until x = 3 (t = 13), b from x = 7 to 13 (t = 17…23), c from x = 17 (t = 27).
        let expected: [(Int, Double, Double)] = [(0, 0, 13), (1, 17, 23), (2, 27, 40)]
        #expect(visits.count == 3)
        for (v, e) in zip(visits, expected) {
            #expect(v.region == e.0)
            #expect(abs(v.entered - e.1) <= 0.11)
            #expect(abs(v.exited - e.2) <= 0.11)
        }
        #expect(abs(walk.location(at: 20).position.x - 10) < 1e-9)
    }

    @Test("overlapping radii: the nearest region's position wins")
    func nearestWins() throws {
        let site = try TestSites.site("""
            site: overlap
            gateways:
              - { id: g1, position: [0, 0] }
              - { id: g2, position: [4, 0] }
            regions:
              - { id: one, gateways: [g1], radius_m: 5 }
              - { id: two, gateways: [g2], radius_m: 5 }
            edges: [[one, two]]
            tracking: { ibeacon_uuids: ["F7826DA6-4FA2-4E98-8024-BC5B71E0893E"] }
            """)
        let truth = GroundTruth(site: site)
        #expect(truth.region(at: Point(x: 1.9, y: 0), floor: 0) == 0)
        #expect(truth.region(at: Point(x: 2.1, y: 0), floor: 0) == 1)
        #expect(truth.region(at: Point(x: 2.1, y: 0), floor: 1) == nil)
        #expect(truth.region(at: Point(x: 9.5, y: 0), floor: 0) == nil)
    }

    @Test("visitors walk in and out through an entrance at their speed and stay in the venue")
    func visitors() throws {
        let site = try TestSites.site(TestSites.line)
        var p = SimulationParameters()
        p.deviceCount = 40
        p.duration = 4 * 3600
        p.arrivals = .atStart
        p.movement.stationaryFraction = 0
        let scenario = try Scenario(site: site, parameters: p)
        let entrance = site.regions[0].position
        // The entrance's only neighbour is b at x = 10, so outside is 10 m the other way.
        let outside = Point(x: -10, y: 0)
        var left = 0
        for d in scenario.devices {
            let w = d.trajectory.waypoints
            #expect(w[0].position == outside)
            #expect(w[1].position == entrance)
            if d.trajectory.departure < p.end {
                left += 1
                #expect(w[w.count - 1].position == outside)
                #expect(w[w.count - 2].position == entrance)
            }
            for (a, b) in zip(w, w.dropFirst()) where b.time > a.time {
                #expect(a.position.distance(to: b.position) / (b.time - a.time) <= 1.4 + 1e-9)
            }
            #expect(w.allSatisfy { $0.position.x >= -10 && $0.position.x <= 22 && abs($0.position.y) <= 2 })
        }
        #expect(left > 30)
    }

    @Test("stationary devices stay at one spot for the whole period")
    func stationary() throws {
        let site = try TestSites.site(TestSites.line)
        var p = SimulationParameters()
        p.deviceCount = 10
        p.movement.stationaryFraction = 1
        let scenario = try Scenario(site: site, parameters: p)
        for d in scenario.devices {
            #expect(d.isStationary)
            #expect(d.trajectory.arrival == p.start && d.trajectory.departure == p.end)
            #expect(Set(d.trajectory.waypoints.map(\.position)).count == 1)
        }
    }
}
