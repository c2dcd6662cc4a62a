import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// A supervised calibration (`waymark site calibrate --truth`): the stays of a walk test decide
/// which seconds teach the self-calibration and in which region, not the tracker's confidence.
@Suite struct CalibrationTeacherTests {
    let device = DeviceID("mac:02-00-00-00-00-01")!

    @Test("a second teaches only when one stay covers all of it")
    func wholeSecondsOnly() {
        let teacher = CalibrationTeacher(stays: [device: [.init(region: 2, from: 20.5, to: 30), .init(region: 1, from: 10, to: 20.5)]])
        #expect(teacher.region(of: device, second: 9) == nil)
        #expect(teacher.region(of: device, second: 10) == 1)
        #expect(teacher.region(of: device, second: 19) == 1)
        #expect(teacher.region(of: device, second: 20) == nil, "20–21 straddles two stays")
        #expect(teacher.region(of: device, second: 21) == 2)
        #expect(teacher.region(of: device, second: 29) == 2)
        #expect(teacher.region(of: device, second: 30) == nil)
        #expect(teacher.region(of: DeviceID("mac:02-00-00-00-00-02")!, second: 15) == nil)
        #expect(teacher.seconds == 10 + 9)
    }

    /// A device standing in r1 of a line for 60 s, heard by its three nearest gateways.
    func stand(_ engine: FusionEngine) -> FusionEngine {
        var d = Driver(engine.site)
        d.engine = engine
        var rng = SeededRandom(seed: 3)
        d.run(for: 60) { d in
            for (g, distance) in [("g0", 8.0), ("g1", 1.5), ("g2", 8.0)] {
                d.hear(g, rssi: rssi(atDistance: distance) + rng.gaussian(sigma: 2))
            }
        }
        return d.engine
    }

    @Test("the stays decide which seconds teach, not the tracker's confidence")
    func staysDecide() throws {
        let site = try Venue.line(4, spacing: 8, radius: 3, levelKnown: true)
        let start = 1_000.0  // `Driver`'s clock
        let untaught = stand(FusionEngine(site: site))
        #expect(untaught.calibration.updates >= 40, "a confident device teaches on its own: \(untaught.calibration.updates)")

        // Stays over 20 of the 60 s: only those seconds teach (fewer when a gate holds one back).
        let some = CalibrationTeacher(stays: [device: [.init(region: 1, from: start + 20, to: start + 40)]])
        let taught = stand(FusionEngine(site: site, teacher: some))
        #expect(taught.calibration.updates >= 15 && taught.calibration.updates <= 20, "\(taught.calibration.updates)")

        // Stays of another device: nothing teaches, however sure the tracker is.
        let other = CalibrationTeacher(stays: [DeviceID("mac:02-00-00-00-00-09")!: [.init(region: 1, from: start, to: start + 60)]])
        #expect(stand(FusionEngine(site: site, teacher: other)).calibration.updates == 0)
    }
}
