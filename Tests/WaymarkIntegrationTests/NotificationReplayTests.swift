import Foundation
import Testing

/// `waymark replay` with notification rules, as a user runs it: a device standing in the shop's
/// doorway for ten minutes, heard now nearer the shop, now nearer the corridor, so that its
/// recorded region flips between the two again and again; then it walks off into the hall.
@Suite("waymark replay: notifications on simulated sightings")
struct NotificationReplayTests {
    static let site = """
    site: doorway
    timezone: Europe/Berlin
    gateways:
      - { id: gw-corridor, position: [0, 0] }
      - { id: gw-shop, position: [8, 0] }
      - { id: gw-hall, position: [24, 0] }
    regions:
      - { id: corridor, gateways: [gw-corridor], radius_m: 3, room: front }
      - { id: shop, name: The shop, gateways: [gw-shop], radius_m: 3, room: front }
      - { id: hall, gateways: [gw-hall], radius_m: 3 }
    edges: [[corridor, shop], [corridor, hall]]
    tracking: { macs: ["aa:bb:cc:dd:ee:01"] }
    notifications:
      - { id: hello, when: enter, match: { regions: [shop] }, cooldown_s: 3600 }
      - { id: bye, when: exit, match: { regions: [shop] }, cooldown_s: 3600 }
      - { id: hello-often, when: enter, match: { regions: [shop] }, cooldown_s: 240 }
      - { id: bye-for-real, when: exit, absence_s: 90, match: { regions: [shop] }, cooldown_s: 3600,
          message: "Left {region_name} after {dwell}" }
    """

    /// Ten minutes alternating every 30 s between "nearer the shop" and "nearer the corridor",
    /// then three minutes in the hall; every gateway that hears the device reports each second.
    static func sightings(start: Double) -> String {
        var lines: [String] = []
        var seed: UInt64 = 42
        func jitter() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % 7) - 3
        }
        func line(_ t: Double, _ gw: String, _ rssi: Int) {
            lines.append(#"{"t":\#(t),"gateway":"\#(gw)","device":"mac:aa-bb-cc-dd-ee-01","rssi":\#(rssi + jitter()),"tx":-59}"#)
        }
        for s in 0..<600 {
            let t = start + Double(s)
            let nearShop = (s / 30) % 2 == 0
            line(t + 0.1, "gw-shop", nearShop ? -56 : -78)
            line(t + 0.2, "gw-corridor", nearShop ? -78 : -56)
        }
        for s in 600..<780 {
            line(start + Double(s) + 0.3, "gw-hall", -55)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func anOscillatingDeviceGetsOneHelloAndAtMostOneGoodbyePerCoolDown() throws {
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let dir = try DeployEnvironment.temporaryDirectory("notify-replay")
        defer { try? FileManager.default.removeItem(at: dir) }
        let sitePath = dir.appendingPathComponent("site.yaml").path
        try Self.site.write(toFile: sitePath, atomically: true, encoding: .utf8)
        let start = 1_780_308_000.0  // 2026-06-01T10:00:00Z
        let input = dir.appendingPathComponent("s.jsonl").path
        try Self.sightings(start: start).write(toFile: input, atomically: true, encoding: .utf8)
        let output = dir.appendingPathComponent("o.jsonl").path

        let check = try AggregatorProcesses.run([waymark, "site", "check", sitePath])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("notification rule 'bye-for-real': exit once away 90 s shop; cool-down 3600 s"), "\(check.output)")

        let replay = try AggregatorProcesses.run([waymark, "replay", "--site", sitePath, "--input", input, "--output", output])
        #expect(replay.status == 0, "\(replay.output)")
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        // The device really oscillated: its recorded region entered the shop again and again.
        let shopEntries = lines.filter { $0["type"] as? String == "location" && $0["region"] as? String == "shop" }
        #expect(shopEntries.count >= 5, "the recorded region entered the shop \(shopEntries.count) times")

        let notes = lines.filter { $0["type"] as? String == "notification" }
        func times(_ rule: String) -> [Double] { notes.filter { $0["rule"] as? String == rule }.compactMap { $0["t"] as? Double } }
        #expect(times("hello").count == 1)
        #expect(times("bye").count <= 1)
        // With a shorter cool-down, hellos come at most once per 240 s of the ten minutes.
        let often = times("hello-often")
        #expect(often.count >= 2 && often.count <= 3, "\(often)")
        #expect(zip(often, often.dropFirst()).allSatisfy { $1 - $0 >= 240 })
        // Waiting 90 s away: no goodbye while it oscillates, one when it walks off for good.
        let forReal = notes.filter { $0["rule"] as? String == "bye-for-real" }
        #expect(forReal.count == 1)
        let last = try #require(forReal.first)
        #expect((last["t"] as? Double ?? 0) >= start + 570, "dated at the final exit: \(last["t"] ?? "")")
        #expect((last["dwell_s"] as? Double ?? 0) >= 500, "the stay spans the oscillation: \(last["dwell_s"] ?? "")")
        #expect((last["message"] as? String ?? "").hasPrefix("Left The shop after "))
        #expect((last["local_time"] as? String ?? "").hasSuffix("+02:00"), "Berlin summer time")
        // The summary counts what was sent and what the cool-downs held back.
        #expect(replay.output.contains("notifications: \(notes.count) sent"), "\(replay.output)")
        #expect(replay.output.contains("held back"), "\(replay.output)")
        // Same input, same notifications, same ids.
        let again = dir.appendingPathComponent("o2.jsonl").path
        #expect(try AggregatorProcesses.run([waymark, "replay", "--site", sitePath, "--input", input, "--output", again]).status == 0)
        let ids = notes.compactMap { $0["id"] as? String }
        let idsAgain = try String(contentsOfFile: again, encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "notification" }.compactMap { $0["id"] as? String }
        #expect(ids == idsAgain && Set(ids).count == ids.count)
    }
}
