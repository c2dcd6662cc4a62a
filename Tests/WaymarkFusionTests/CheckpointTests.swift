import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

@Suite struct CheckpointTests {
    @Test func restoredEngineContinuesExactlyLikeTheOriginal() throws {
        let site = try Venue.line(4, spacing: 10, radius: 3)
        let walk: (inout Driver) -> Void = { d in
            d.heartbeat()
            let i = min(3, Int((d.now - 1000) / 12))
            d.hear("g\(i)", rssi: rssi(atDistance: 1))
        }
        var original = Driver(site)
        original.run(for: 20, step: 0.5, walk)
        // Save through JSON, as the aggregator would, and restore into a fresh engine.
        let saved = try JSONEncoder().encode(original.engine.checkpoint())
        let calibration = try JSONEncoder().encode(original.engine.calibrationCheckpoint())
        var restored = Driver(site)
        // Gateway health is not part of a device checkpoint: the aggregator learns it again from
        // gateway status and batches; here the new engine saw the same gateway heartbeats.
        restored.run(for: 20, step: 0.5) { $0.heartbeat() }
        for c in try JSONDecoder().decode([DeviceCheckpoint].self, from: saved) { restored.engine.restore(c) }
        restored.engine.restore(calibration: try JSONDecoder().decode(CalibrationCheckpoint.self, from: calibration))
        original.outputs.removeAll()
        original.run(for: 60, step: 0.5, walk)
        restored.run(for: 60, step: 0.5, walk)
        #expect(!original.outputs.isEmpty)
        #expect(restored.outputs == original.outputs)
    }

    @Test func aRestartWhileTheVenueLearnsItsLevelContinuesLikeTheOriginal() throws {
        // A venue reading 15 dB below the configured level: nobody is placed in its first 10 s, so
        // devices then get their sets from further out (`VenueCalibration.reach`). Saved at 6 s,
        // the restored engine must know how long the venue has been waiting (the calibration
        // checkpoint's first evidence time), or it would wait 10 s more and record another history.
        let site = try Venue.line(3, spacing: 10, radius: 3)
        let walk: (inout Driver) -> Void = { d in
            d.heartbeat()
            let x = min(19, 1 + max(0, d.now - 1030) * 0.5)
            for g in 0..<3 { d.hear("g\(g)", rssi: rssi(atDistance: max(0.5, abs(Double(g) * 10 - x))) - 15) }
        }
        var original = Driver(site)
        original.run(for: 6, step: 0.5, walk)
        #expect(original.engine.calibration.updates == 0 && original.monitored.isEmpty)
        let saved = try JSONEncoder().encode(original.engine.checkpoint())
        let calibration = try JSONEncoder().encode(original.engine.calibrationCheckpoint())
        var restored = Driver(site)
        restored.run(for: 6, step: 0.5) { $0.heartbeat() }
        for c in try JSONDecoder().decode([DeviceCheckpoint].self, from: saved) { restored.engine.restore(c) }
        restored.engine.restore(calibration: try JSONDecoder().decode(CalibrationCheckpoint.self, from: calibration))
        original.outputs.removeAll()
        original.run(for: 90, step: 0.5, walk)
        restored.run(for: 90, step: 0.5, walk)
        #expect(!original.locations.isEmpty)
        #expect(restored.outputs == original.outputs)
    }

    @Test func engineRestoredWithGatewayHealthNeedsNoReplay() throws {
        // The aggregator's site-wide checkpoint carries gateway health and the calibration, so a
        // fresh engine given only checkpoints continues exactly (no heartbeats replayed).
        let site = try Venue.line(4, spacing: 10, radius: 3)
        let walk: (inout Driver) -> Void = { d in
            d.heartbeat()
            let i = min(3, Int((d.now - 1000) / 12))
            d.hear("g\(i)", rssi: rssi(atDistance: 1))
            d.hear("g\((i + 1) % 4)", rssi: rssi(atDistance: 9))
        }
        var original = Driver(site)
        original.run(for: 20, step: 0.5, walk)
        let encoder = JSONEncoder(), decoder = JSONDecoder()
        let devices = try encoder.encode(original.engine.checkpoint())
        let calibration = try encoder.encode(original.engine.calibrationCheckpoint())
        let health = try encoder.encode(original.engine.gatewayHealthCheckpoint())
        var restored = Driver(site)
        restored.now = original.now
        for c in try decoder.decode([DeviceCheckpoint].self, from: devices) { restored.engine.restore(c) }
        restored.engine.restore(calibration: try decoder.decode(CalibrationCheckpoint.self, from: calibration))
        restored.engine.restore(gatewayHealth: try decoder.decode([String: GatewayHealthCheckpoint].self, from: health))
        original.outputs.removeAll()
        original.run(for: 60, step: 0.5, walk)
        restored.run(for: 60, step: 0.5, walk)
        #expect(!original.outputs.isEmpty)
        #expect(restored.outputs == original.outputs)
    }

    @Test func aCalibrationWrittenIntoTheSiteFileSinceTheCheckpointIsWhereTheEngineStarts() throws {
        let learnedOn = try Venue.line(4, spacing: 10, radius: 3)
        var d = Driver(learnedOn)
        d.run(for: 60, step: 0.5) { d in
            d.heartbeat()
            for (g, m) in [("g0", 9.0), ("g1", 1.0), ("g2", 9.0)] { d.hear(g, rssi: rssi(atDistance: m)) }
        }
        let learned = d.engine.calibration
        #expect(learned.updates > 0 && learned.powerCorrectionDB != 0)
        let saved = try JSONDecoder().decode(CalibrationCheckpoint.self, from: JSONEncoder().encode(d.engine.calibrationCheckpoint()))

        // The same site file: the engine resumes what it learned.
        var same = FusionEngine(site: learnedOn)
        let resumed = same.restore(calibration: saved)
        #expect(resumed)
        #expect(same.calibration.updates == learned.updates && same.calibration.powerCorrectionDB == learned.powerCorrectionDB)

        // A `calibration:` section written since (here the venue's level measured at 0 dB): the
        // engine starts from it; only the gateways' learned reception is kept.
        var rewritten = FusionEngine(site: try Venue.line(4, spacing: 10, radius: 3, levelKnown: true))
        let resumedRewritten = rewritten.restore(calibration: saved)
        #expect(!resumedRewritten)
        #expect(rewritten.calibration.updates == 0 && rewritten.calibration.powerCorrectionDB == 0)
        #expect(rewritten.calibration.reception == learned.reception)

        // A checkpoint from before the section was saved with it cannot tell: it resumes.
        var json = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(saved)) as? [String: Any])
        json.removeValue(forKey: "siteCalibration")
        let older = try JSONDecoder().decode(CalibrationCheckpoint.self, from: JSONSerialization.data(withJSONObject: json))
        var fromOlder = FusionEngine(site: try Venue.line(4, spacing: 10, radius: 3, levelKnown: true))
        let resumedOlder = fromOlder.restore(calibration: older)
        #expect(resumedOlder)
        #expect(fromOlder.calibration.updates == learned.updates)
    }

    @Test func checkpointSurvivesRemovedRegions() throws {
        var d = Driver(try Venue.line(3))
        d.run(for: 3) { d in d.heartbeat(); d.hear("g2", rssi: rssi(atDistance: 1)) }
        let saved = try #require(d.engine.checkpoint(device: d.device))
        var smaller = FusionEngine(site: try Venue.line(2))
        smaller.restore(saved)
        let out = smaller.finish(at: 2000)
        // r2 no longer exists: the restored device has no current region and no visit to close.
        #expect(out.allSatisfy { $0.type != "visit" })
    }
}
