import Testing
import WaymarkCore
@testable import WaymarkFusion

/// `exit_margin_db`: the exit buffer runs from the last sighting within the radius shortened by
/// the margin, while entering still takes the full radius and a device standing between the two
/// radii stays inside.
@Suite struct ExitMarginTests {
    /// One region of radius 5 m (a second one far away); the device is heard at 1 m for 10 s, then
    /// at `edge` metres for 10 s, then not at all. Returns the exit time of r0 and the time of the
    /// move to the edge.
    func exitAfterWalkingAway(edge: Double, fusion: String) throws -> (exit: Double, moved: Double, lastHeard: Double) {
        var d = Driver(try Venue.line(2, spacing: 40, radius: 5, fusion: fusion))
        d.run(for: 10, step: 0.5) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        let moved = d.now
        d.run(for: 10, step: 0.5) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: edge)) }
        let lastHeard = d.now
        d.run(for: 45) { $0.heartbeat() }
        let exit = try #require(d.states("r0").last { $0.state == .outside })
        return (exit.t, moved, lastHeard)
    }

    @Test func marginStartsTheExitBufferWhenTheDeviceLeavesTheInnerRadius() throws {
        // 4.5 m is inside the 5 m radius but outside 5 × 10^(−3/20) = 3.54 m. Self-calibration is off:
        // these are the distances the site file describes.
        let plain = try exitAfterWalkingAway(edge: 4.5, fusion: "self_calibration: false")
        #expect(plain.exit == plain.lastHeard + 30, "without a margin every sighting within 5 m re-arms the buffer")
        let margin = try exitAfterWalkingAway(edge: 4.5, fusion: "exit_margin_db: 3\nself_calibration: false")
        #expect(margin.exit < plain.exit)
        // The smoothed level needs a few readings to fall below the inner radius after the move.
        #expect(margin.exit >= margin.moved + 30 && margin.exit <= margin.moved + 35,
                "the buffer starts when the smoothed distance leaves the inner radius")
    }

    @Test func deviceAtTheEdgeEntersAndStaysInside() throws {
        var d = Driver(try Venue.line(2, spacing: 40, radius: 5, fusion: "exit_margin_db: 3\nself_calibration: false"))
        d.run(for: 180, step: 0.5) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 4.5)) }
        #expect(d.states("r0").map(\.state) == [.inside], "entry takes the full radius; no exit while heard within it")
        #expect(d.locations.map(\.region) == ["r0"])
        // Once it is no longer heard, it leaves 30 s after its last sighting.
        let last = d.now
        d.run(for: 40) { $0.heartbeat() }
        #expect(d.states("r0").last?.state == .outside)
        #expect(try #require(d.states("r0").last?.t) <= last + 30)
    }

    @Test func exitMarginIsValidated() throws {
        var p = FusionParameters()
        p.exitMarginDB = -1
        #expect(p.problems().map(\.key) == ["exit_margin_db"])
        p.exitMarginDB = 12
        #expect(p.problems().map(\.key) == ["exit_margin_db"])
        p.exitMarginDB = 3
        #expect(p.problems().isEmpty)
    }
}
