import Testing
import WaymarkCore

@Suite struct SightingWindowerTests {
    let a = DeviceID("mac:aa-bb-cc-dd-ee-01")!
    let b = DeviceID("mac:aa-bb-cc-dd-ee-02")!

    @Test("per-device count, RSSI max/mean/last, tx, first/last; one batch per window with seq")
    func aggregates() throws {
        var w = SightingWindower(window: 1, gateway: "gw1", boot: "boot1")
        #expect(w.add(device: a, rssi: -70, tx: nil, time: 100.1) == nil)
        #expect(w.add(device: b, rssi: -90, tx: -59, time: 100.2) == nil)
        #expect(w.add(device: a, rssi: -60, tx: -61, time: 100.5) == nil)
        #expect(w.add(device: a, rssi: -80, tx: nil, time: 100.9) == nil)
        let closed = w.add(device: b, rssi: -50, tx: nil, time: 101.0)
        let batch = try #require(closed)
        #expect(batch.v == 1 && batch.gateway == "gw1" && batch.boot == "boot1" && batch.seq == 1)
        #expect(batch.start == 100 && batch.end == 101)
        let ea = try #require(batch.sightings.first { $0.device == a })
        #expect(ea.count == 3 && ea.rssiMax == -60 && ea.rssiMean == -70 && ea.rssiLast == -80)
        #expect(ea.tx == -61 && ea.first == 100.1 && ea.last == 100.9)
        let eb = try #require(batch.sightings.first { $0.device == b })
        #expect(eb.count == 1 && eb.tx == -59)
        // The sighting at 101.0 opened the next window.
        let flushed = w.flush()
        let second = try #require(flushed)
        #expect(second.seq == 2 && second.start == 101 && second.sightings.map(\.count) == [1])
        #expect(w.flush() == nil)
    }

    @Test("a clock tick closes the window; empty windows produce no batch and use no seq")
    func ticks() throws {
        var w = SightingWindower(window: 2, gateway: "g", boot: "x")
        #expect(w.advance(to: 50) == nil)
        _ = w.add(device: a, rssi: -70, tx: nil, time: 51)
        #expect(w.advance(to: 51.9) == nil)
        let ticked = w.advance(to: 52)
        let batch = try #require(ticked)
        #expect(batch.seq == 1 && batch.start == 50 && batch.end == 52)
        #expect(w.advance(to: 60) == nil)
        _ = w.add(device: a, rssi: -70, tx: nil, time: 70)
        #expect(w.flush()?.seq == 2)
    }

    @Test("with empty windows the clock closes a batch every window, empty when nothing was heard, numbered like the others")
    func emptyWindows() throws {
        var w = SightingWindower(window: 1, gateway: "g", boot: "x", emptyWindows: true)
        #expect(w.advance(to: 10.2) == nil, "the first tick opens the window")
        let quietClosed = w.advance(to: 11.05)
        let quiet = try #require(quietClosed)
        #expect(quiet.seq == 1 && quiet.start == 10 && quiet.end == 11 && quiet.sightings.isEmpty)
        _ = w.add(device: a, rssi: -70, tx: nil, time: 11.4)
        let heardClosed = w.advance(to: 12.01)
        let heard = try #require(heardClosed)
        #expect(heard.seq == 2 && heard.start == 11 && heard.sightings.map(\.device) == [a])
        #expect(w.advance(to: 12.5) == nil)
        // A stall of several windows sends the window that was open, then goes on from now.
        let stalledClosed = w.advance(to: 15.3)
        let stalled = try #require(stalledClosed)
        #expect(stalled.seq == 3 && stalled.start == 12 && stalled.sightings.isEmpty)
        let nextClosed = w.advance(to: 16.0)
        let next = try #require(nextClosed)
        #expect(next.seq == 4 && next.start == 15)
        // A sighting that arrives before the tick closes the open window itself.
        let bySighting = w.add(device: b, rssi: -60, tx: nil, time: 17.2)
        let closedBySighting = try #require(bySighting)
        #expect(closedBySighting.seq == 5 && closedBySighting.start == 16 && closedBySighting.sightings.isEmpty)
        let flushedClosed = w.flush()
        let flushed = try #require(flushedClosed)
        #expect(flushed.seq == 6 && flushed.start == 17 && flushed.sightings.map(\.device) == [b])
    }

    @Test("late sightings join the open window and are counted")
    func late() throws {
        var w = SightingWindower(window: 1, gateway: "g", boot: "x")
        _ = w.add(device: a, rssi: -70, tx: nil, time: 10.5)
        #expect(w.add(device: a, rssi: -72, tx: nil, time: 9.8) == nil)
        #expect(w.lateSightings == 1)
        let flushed = w.flush()
        let batch = try #require(flushed)
        #expect(batch.sightings[0].count == 2 && batch.sightings[0].first == 9.8)
    }

    @Test("telemetry attaches only to a device already in the window")
    func telemetry() throws {
        var w = SightingWindower(window: 1, gateway: "g", boot: "x")
        let t = SightingBatch.Telemetry(batteryMV: 3000, temperatureC: 21.5)
        _ = w.attach(telemetry: t, to: a, time: 5.1)
        _ = w.add(device: b, rssi: -70, tx: nil, time: 5.2)
        _ = w.attach(telemetry: t, to: b, time: 5.3)
        let flushed = w.flush()
        let batch = try #require(flushed)
        #expect(batch.sightings.count == 1 && batch.sightings[0].telemetry == t)
    }
}
