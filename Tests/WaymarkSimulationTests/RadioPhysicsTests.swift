import Foundation
import Testing
import WaymarkCore
@testable import WaymarkSimulation

@Suite("Radio physics of the simulator")
struct RadioPhysicsTests {
    /// Parameters with the cut-off far below every reading, so means are not truncated.
    func quietCutoff(_ configure: (inout SimulationParameters) -> Void = { _ in }) -> SimulationParameters {
        var p = SimulationParameters()
        p.duration = 2000
        p.radio.sensitivityDBm = -200
        p.radio.gatewayOffsetSpreadDB = 0
        configure(&p)
        return p
    }

    @Test("mean RSSI falls with distance at the configured exponent", arguments: [2.0, 2.7, 3.5])
    func pathLossSlope(exponent: Double) throws {
        let site = try TestSites.site(TestSites.single)
        let p = quietCutoff { $0.radio.pathLossExponent = exponent }
        let distances = [1.0, 2, 4, 8, 16, 32]
        let devices = distances.enumerated().map { i, d in
            TestSites.standing(i, at: Point(x: d, y: 0), start: p.start, duration: p.duration)
        }
        let sightings = TestSites.allSightings(try Scenario(site: site, parameters: p, devices: devices))
        // Least-squares fit of mean RSSI against 10·log10(d): the slope is −n.
        var xs: [Double] = [], ys: [Double] = []
        for (i, d) in distances.enumerated() {
            let mine = sightings.filter { $0.device == Int32(i) }.map { Double($0.rssi) }
            #expect(mine.count > 1000)
            xs.append(10 * log10(d))
            ys.append(mine.reduce(0, +) / Double(mine.count))
        }
        let mx: Double = xs.reduce(0, +) / Double(xs.count)
        let my: Double = ys.reduce(0, +) / Double(ys.count)
        var sxy = 0.0, sxx = 0.0
        for (x, y) in zip(xs, ys) {
            sxy += (x - mx) * (y - my)
            sxx += (x - mx) * (x - mx)
        }
        let slope = sxy / sxx
        #expect(abs(-slope - exponent) < 0.1, "fitted exponent \(-slope), configured \(exponent)")
        // At 1 m the mean is the measured power (−59 dBm) within the noise of the mean.
        #expect(abs(ys[0] - -59) < 1)
    }

    @Test("shadowing has the configured spread and correlation time")
    func shadowingSpread() throws {
        let site = try TestSites.site(TestSites.single)
        let p = quietCutoff {
            $0.radio.shadowingSigmaDB = 6
            $0.radio.shadowingCorrelationS = 3
            $0.radio.packetJitterDB = 0
            $0.radio.measuredPowerSpreadDB = 0
            $0.radio.packetLoss = 0
            $0.duration = 4000
        }
        let devices = (0..<10).map { TestSites.standing($0, at: Point(x: 5, y: 0), start: p.start, duration: p.duration, interval: 1) }
        let sightings = TestSites.allSightings(try Scenario(site: site, parameters: p, devices: devices))
        let mean = RadioModel(parameters: p.radio).meanRSSI(p1m: -59, distanceM: 5, floors: 0, gatewayBiasDB: 0)
        let residuals = sightings.map { Double($0.rssi) - mean }
        let sd = (residuals.map { $0 * $0 }.reduce(0, +) / Double(residuals.count)).squareRoot()
        // Rounding to whole dBm adds 1/12 dB² of variance.
        #expect(abs(sd - (36 + 1.0 / 12).squareRoot()) < 0.25, "measured σ \(sd) dB")
        // Lag-one correlation of one device's readings 1 s apart ≈ exp(−1/3).
        let one = sightings.filter { $0.device == 0 }.map { Double($0.rssi) - mean }
        let lag = zip(one, one.dropFirst()).map { $0 * $1 }.reduce(0, +) / one.map { $0 * $0 }.reduce(0, +)
        #expect(abs(lag - exp(-1.0 / 3)) < 0.06, "lag-1 correlation \(lag)")
    }

    @Test("packet loss removes the configured fraction of adverts")
    func packetLossRate() throws {
        let site = try TestSites.site(TestSites.single)
        let p = quietCutoff { $0.radio.packetLoss = 0.3 }
        let interval = 0.5
        let devices = (0..<5).map { TestSites.standing($0, at: Point(x: 3, y: 0), start: p.start, duration: p.duration, interval: interval) }
        let heard = TestSites.allSightings(try Scenario(site: site, parameters: p, devices: devices)).count
        // Each advert is followed by the interval plus BLE's random delay (mean 5 ms).
        let sent = Double(devices.count) * p.duration / (interval + 0.005)
        let lossRate = 1 - Double(heard) / sent
        #expect(abs(lossRate - 0.3) < 0.015, "measured loss \(lossRate)")
    }

    @Test("nothing below the sensitivity cut-off is reported")
    func sensitivityCutoff() throws {
        let site = try TestSites.site(TestSites.single)
        var p = SimulationParameters()
        p.duration = 600
        let devices = [TestSites.standing(0, at: Point(x: 25, y: 0), start: p.start, duration: p.duration)]
        let sightings = TestSites.allSightings(try Scenario(site: site, parameters: p, devices: devices))
        #expect(!sightings.isEmpty)
        #expect(sightings.allSatisfy { Double($0.rssi) >= p.radio.sensitivityDBm })
    }
}
