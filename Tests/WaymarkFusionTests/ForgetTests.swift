import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// `forget_after_s`: idle devices are dropped, their slots reused lowest first, and an engine
/// restored from checkpoints forgets and reuses exactly as the uninterrupted one.
@Suite struct ForgetTests {
    static let fusion = "forget_after_s: 120\njourney_timeout_s: 60"

    func id(_ n: Int) -> DeviceID { DeviceID("mac:02-00-00-00-00-\(String(format: "%02x", n))")! }

    func forgotten(_ outputs: [FusionOutput]) -> [FusionOutput.Forgotten] {
        outputs.compactMap { if case .forgotten(let f) = $0 { f } else { nil } }
    }

    @Test func idleDeviceIsForgottenAfterItsJourneyEnds() throws {
        var d = Driver(try Venue.line(3, fusion: Self.fusion))
        d.run(for: 10) { $0.heartbeat(); $0.hear("g0", rssi: rssi(atDistance: 1)) }
        let lastHeard = d.now
        d.run(for: 400) { $0.heartbeat() }
        let gone = forgotten(d.outputs)
        try #require(gone.count == 1)
        #expect(gone[0].device == d.device)
        #expect(gone[0].lastHeard == lastHeard)
        // The first tick at least forget_after_s after the last sighting (the journey had ended).
        #expect(gone[0].t == lastHeard + 120)
        let journeyEnd = try #require(d.journeys.last).t
        #expect(journeyEnd < gone[0].t)
        #expect(d.outputs.last == .forgotten(gone[0]), "nothing follows the forgetting")
        #expect(d.engine.deviceCount == 0)
        #expect(d.engine.existingHandle(for: d.device) == nil)
        #expect(d.engine.checkpoint().isEmpty)
        #expect(d.engine.forgottenDevices == 1)
    }

    @Test func openJourneyKeepsTheDeviceUntilItEnds() throws {
        // forget_after_s shorter than the journey timeout: the device waits for its journey.
        var d = Driver(try Venue.line(3, fusion: "forget_after_s: 60\njourney_timeout_s: 600"))
        d.run(for: 10) { $0.heartbeat(); $0.hear("g0", rssi: rssi(atDistance: 1)) }
        d.run(for: 1000) { $0.heartbeat() }
        let gone = forgotten(d.outputs)
        try #require(gone.count == 1)
        let journey = try #require(d.journeys.last)
        #expect(gone[0].t == journey.t, "forgotten at the tick its journey ended")
        #expect(d.outputs.firstIndex(of: .journey(journey))! < d.outputs.firstIndex(of: .forgotten(gone[0]))!)
    }

    @Test func deviceHeardAgainStartsAfresh() throws {
        var d = Driver(try Venue.line(3, fusion: Self.fusion))
        d.run(for: 10) { $0.heartbeat(); $0.hear("g0", rssi: rssi(atDistance: 1)) }
        d.run(for: 400) { $0.heartbeat() }
        let before = d.monitored.count
        d.outputs.removeAll()
        d.run(for: 10) { $0.heartbeat(); $0.hear("g2", rssi: rssi(atDistance: 1)) }
        #expect(d.engine.deviceCount == 1)
        #expect(before == 1 && d.monitored.count == 1, "a new monitored set, built where it is heard now")
        #expect(d.monitored.first?.regions.first == "r2")
        #expect(d.states("r2").first?.state == .inside)
        #expect(forgotten(d.outputs).isEmpty)
    }

    @Test func zeroNeverForgets() throws {
        var d = Driver(try Venue.line(3, fusion: "forget_after_s: 0\njourney_timeout_s: 60"))
        d.run(for: 10) { $0.heartbeat(); $0.hear("g0", rssi: rssi(atDistance: 1)) }
        d.run(for: 3000, step: 5) { $0.heartbeat() }
        #expect(forgotten(d.outputs).isEmpty)
        #expect(d.engine.deviceCount == 1)
        #expect(d.deviceState.nextDeadline == .infinity, "an idle device kept forever costs the timer scan nothing")
    }

    @Test func slotsOfForgottenDevicesAreReusedLowestFirst() throws {
        var d = Driver(try Venue.line(3, fusion: Self.fusion))
        // Devices 0, 1, 2 heard at once; 1 keeps being heard, 0 and 2 go quiet.
        d.run(for: 10) { d in
            d.heartbeat()
            for n in 0..<3 { d.hear("g\(n)", rssi: rssi(atDistance: 1), device: id(n)) }
        }
        d.run(for: 400) { $0.heartbeat(); $0.hear("g1", rssi: rssi(atDistance: 1), device: id(1)) }
        #expect(Set(forgotten(d.outputs).map(\.device)) == [id(0), id(2)])
        #expect(d.engine.deviceCount == 1)
        #expect(d.engine.handle(for: id(5)).index == 0)
        #expect(d.engine.handle(for: id(6)).index == 2)
        #expect(d.engine.handle(for: id(7)).index == 3)
        #expect(d.engine.handle(for: id(1)).index == 1)
        #expect(d.engine.deviceCount == 4)
    }

    @Test func restoredEngineForgetsAndReusesSlotsLikeTheOriginal() throws {
        let site = try Venue.line(3, fusion: Self.fusion)
        // Devices come and go: each n is heard for 20 s from 1000 + 40·n, at region n mod 3.
        let traffic: (inout Driver) -> Void = { d in
            d.heartbeat()
            for n in 0..<12 {
                let start = 1000 + 40 * Double(n)
                if d.now >= start && d.now < start + 20 {
                    d.hear("g\(n % 3)", rssi: rssi(atDistance: 1.5), device: id(n))
                }
            }
        }
        var original = Driver(site)
        original.run(for: 300, traffic)
        #expect(!forgotten(original.outputs).isEmpty, "some devices were forgotten before the checkpoint")
        // Restore as the aggregator does: every checkpoint with its ordinal, in ordinal order.
        var restored = Driver(site)
        restored.now = original.now
        for c in original.engine.checkpoint().sorted(by: { $0.ordinal < $1.ordinal }) { restored.engine.restore(c) }
        restored.engine.restore(calibration: original.engine.calibrationCheckpoint())
        restored.engine.restore(gatewayHealth: original.engine.gatewayHealthCheckpoint())
        #expect(restored.engine.deviceCount == original.engine.deviceCount)
        original.outputs.removeAll()
        original.run(for: 500, traffic)
        restored.run(for: 500, traffic)
        #expect(forgotten(original.outputs).count >= 3)
        #expect(restored.outputs == original.outputs)
        for n in 0..<12 {
            #expect(restored.engine.existingHandle(for: id(n)) == original.engine.existingHandle(for: id(n)))
        }
    }

    @Test func idleDeviceFromAnOlderCheckpointIsForgotten() throws {
        // Saved by an engine that never forgot (its idle devices had no deadline at all).
        var old = Driver(try Venue.line(3, fusion: "forget_after_s: 0\njourney_timeout_s: 60"))
        old.run(for: 10) { $0.heartbeat(); $0.hear("g0", rssi: rssi(atDistance: 1)) }
        old.run(for: 200) { $0.heartbeat() }
        #expect(old.deviceState.nextDeadline == .infinity)
        let saved = try #require(old.engine.checkpoint(device: old.device))
        var d = Driver(try Venue.line(3, fusion: Self.fusion))
        d.now = old.now
        d.engine.restore(saved)
        d.run(for: 2) { $0.heartbeat() }
        #expect(forgotten(d.outputs).map(\.device) == [d.device])
        #expect(d.engine.deviceCount == 0)
    }

    @Test func staleHandleOfAForgottenDeviceIsRefused() throws {
        var d = Driver(try Venue.line(3, fusion: Self.fusion))
        d.run(for: 5) { $0.heartbeat(); $0.hear("g0", rssi: rssi(atDistance: 1)) }
        let stale = try #require(d.engine.existingHandle(for: d.device))
        d.run(for: 400) { $0.heartbeat() }
        let out = d.engine.ingest(Observation(device: stale, gateway: 0, time: d.now, rssi: -60))
        #expect(out.isEmpty)
        #expect(d.engine.counters.unknownDevice == 1)
    }

    @Test func siteFileRejectsAForgetTimeUnderAMinute() throws {
        #expect(throws: SiteError.self) { try Venue.line(2, fusion: "forget_after_s: 30") }
        #expect(throws: SiteError.self) { try Venue.line(2, fusion: "forget_after_s: -1") }
        #expect(try Venue.line(2, fusion: "forget_after_s: 0").fusion.forgetAfterS == 0)
        #expect(try Venue.line(2).fusion.forgetAfterS == 3600)
    }

    @Test func forgottenOutputRoundTripsThroughTheReplayFormat() throws {
        for o in [FusionOutput.forgotten(.init(t: 1130, device: id(1), lastHeard: 1010)),
                  .forgotten(.init(t: 1130, device: id(1), lastHeard: nil))] {
            let line = try JSONEncoder().encode(o)
            #expect(try JSONDecoder().decode(FusionOutput.self, from: line) == o)
            #expect(String(decoding: line, as: UTF8.self).contains("\"type\":\"forgotten\""))
        }
    }
}
