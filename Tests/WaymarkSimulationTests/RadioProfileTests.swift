import Foundation
import Testing
import WaymarkCore
@testable import WaymarkSimulation

@Suite("Radio profiles of the simulator")
struct RadioProfileTests {
    @Test("ideal is the original model; indoor and harsh carry the fitted and crowded physics")
    func profiles() {
        #expect(RadioParameters(profile: .ideal) == RadioParameters())
        let indoor = RadioParameters(profile: .indoor), harsh = RadioParameters(profile: .harsh)
        #expect(indoor.profile == .indoor && harsh.profile == .harsh)
        #expect(harsh.shadowingSigmaDB > indoor.shadowingSigmaDB)
        #expect(harsh.receptionP0 < indoor.receptionP0)
        #expect(RadioProfile.default == .indoor)
    }

    @Test("a fitted profile is deterministic per seed and differs between seeds")
    func deterministic() throws {
        let site = try TestSites.site(TestSites.line)
        func run(_ seed: UInt64) throws -> [SimulatedSighting] {
            var p = SimulationParameters()
            p.deviceCount = 5
            p.duration = 300
            p.seed = seed
            p.arrivals = .atStart
            p.radio = RadioParameters(profile: .indoor, site: site)
            return TestSites.allSightings(try Scenario(site: site, parameters: p))
        }
        let a = try run(4), b = try run(4), c = try run(5)
        #expect(!a.isEmpty)
        #expect(a == b)
        #expect(a != c)
    }

    /// Two devices standing 2 m from gateway a, one heard through a wall by gateway b 8 m away.
    func meanAtB(walls: Bool) throws -> (mean: Double, receivedNear: Double, receivedFar: Double) {
        let site = try TestSites.site(TestSites.line)
        var p = SimulationParameters()
        p.duration = 3000
        p.radio = RadioParameters(profile: .indoor)
        if !walls { p.radio.wallLossDB = 0 }
        p.radio.sensitivityDBm = -200
        p.radio.gatewayOffsetSpreadDB = 0
        let device = TestSites.standing(0, at: Point(x: 2, y: 0), start: p.start, duration: p.duration)
        let sightings = TestSites.allSightings(try Scenario(site: site, parameters: p, devices: [device]))
        let atB = sightings.filter { $0.gateway == 1 }.map { Double($0.rssi) }
        let adverts = p.duration / 0.5
        let near = Double(sightings.filter { $0.gateway == 0 }.count) / adverts
        let far = Double(sightings.filter { $0.gateway == 2 }.count) / adverts
        return (atB.reduce(0, +) / Double(atB.count), near, far)
    }

    @Test("walls cost the fitted wall loss; reception falls with distance")
    func wallsAndReception() throws {
        let walled = try meanAtB(walls: true), open = try meanAtB(walls: false)
        // Same seed, same draws: the wall is the whole difference.
        #expect(abs((open.mean - walled.mean) - RadioParameters(profile: .indoor).wallLossDB) < 0.6)
        // 2 m: about p0 = 92 %; 18 m: well below half (d50 14 m).
        #expect(abs(walled.receivedNear - 0.92) < 0.03, "\(walled.receivedNear)")
        #expect(walled.receivedFar < 0.2, "\(walled.receivedFar)")
    }
}
