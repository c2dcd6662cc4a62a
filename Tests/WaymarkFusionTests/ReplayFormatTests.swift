import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

@Suite struct ReplayFormatTests {
    @Test func parsesTheIssueExampleLine() throws {
        let line = #"{"t": 1581249601.41, "gateway": "gw-lobby", "device": "mac:e7-8f-13-56-24-ce", "rssi": -77, "tx": -59}"#
        let s = try SightingRecord(jsonLine: line)
        #expect(s.time == 1581249601.41 && s.gateway == "gw-lobby" && s.rssi == -77 && s.tx == -59)
        #expect(s.device.rawValue == "mac:e7-8f-13-56-24-ce")
    }

    @Test func acceptsISO8601TimesWithZoneAndOffset() throws {
        let utc = try SightingRecord(jsonLine: #"{"t":"2020-02-09T12:00:01.41Z","gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":-77}"#)
        #expect(abs(utc.time - 1581249601.41) < 1e-6)
        #expect(utc.tx == nil)
        let offset = try SightingRecord(jsonLine: #"{"t":"2020-02-09T13:00:01+01:00","gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":-77,"tx":null}"#)
        #expect(offset.time == 1581249601)
    }

    @Test func parsesGatewayStatusLines() throws {
        let s = try ReplayInput.parse(jsonLine: #"{"t": 10, "gateway": "gw-a", "status": "offline"}"#)
        #expect(s == .gatewayStatus(gateway: "gw-a", online: false, time: 10))
    }

    @Test(arguments: [
        (#"{"gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":-77}"#, "missing 't'"),
        (#"{"t":"yesterday","gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":-77}"#, "not ISO-8601"),
        (#"{"t":"2020-02-09T12:00:01","gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":-77}"#, "not ISO-8601"),
        (#"{"t":1,"device":"mac:e7-8f-13-56-24-ce","rssi":-77}"#, "missing 'gateway'"),
        (#"{"t":1,"gateway":"g","device":"phone-7","rssi":-77}"#, "is not a device id"),
        (#"{"t":1,"gateway":"g","device":"mac:e7-8f-13-56-24-ce"}"#, "missing 'rssi'"),
        (#"{"t":1,"gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":"loud"}"#, "'rssi' must be a number"),
        (#"{"t":1,"gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":-77"#, "unterminated object"),
        (#"not json"#, "expected '{'"),
        (#"{"t":1,"gateway":"g","status":"sleeping"}"#, "'status' must be"),
    ])
    func reportsWhatIsWrong(line: String, reason: String) {
        #expect {
            _ = try ReplayInput.parse(jsonLine: line)
        } throws: { error in
            (error as? ReplayInputError)?.message.contains(reason) ?? false
        }
    }

    @Test func outputsEncodeToTheReplayLineFormat() throws {
        let device = DeviceID("mac:e7-8f-13-56-24-ce")!
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func json(_ o: FusionOutput) throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: try encoder.encode(o)) as! [String: Any]
        }
        let loc = try json(.location(.init(t: 5, device: device, region: nil)))
        #expect(loc["type"] as? String == "location" && loc["t"] as? Double == 5 && loc["region"] is NSNull)
        let visit = try json(.visit(.init(t: 9, device: device, region: "hall", entered: 1, exited: 8.5, inferred: true)))
        #expect(visit["dwell_s"] as? Double == 7.5 && visit["inferred"] as? Bool == true && visit["device"] as? String == device.rawValue)
        let state = try json(.state(.init(t: 2, device: device, region: "hall", state: .inside, proximity: .near, distanceM: 1.5)))
        #expect(state["state"] as? String == "inside" && state["proximity"] as? String == "near" && state["distance_m"] as? Double == 1.5)
        let journey = FusionOutput.journey(.init(t: 3, device: device, started: 1, ended: 2, regions: ["a", "b"]))
        #expect(try JSONDecoder().decode(FusionOutput.self, from: encoder.encode(journey)) == journey)
        let monitored = FusionOutput.monitored(.init(t: 3, device: device, regions: ["a", "b"]))
        #expect(try JSONDecoder().decode(FusionOutput.self, from: encoder.encode(monitored)) == monitored)
    }
}
