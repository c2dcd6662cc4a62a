import Foundation
import Testing
import WaymarkConfig

/// The walk-test recipe of deploy/README.md, section 3.1, as an operator runs it: every gateway's
/// real `waymark-edge` publishes over TLS with its own account, the aggregator's account records
/// the batches with the recipe's `mosquitto_sub` filter into walk.jsonl, and
/// `waymark site calibrate --batches --input walk.jsonl --truth stays.jsonl` finds the gateway that
/// reads hot. The edges run one after another, so the recording holds one gateway's walk after
/// another's (as when a gateway's spool catches up after an outage): the calibration must read it
/// in time order all the same.
@Suite("Deploy: the walk-test recipe", .serialized, .enabled(if: DeployEnvironment.brokerSuiteRuns))
struct DeployWalkTestTests {
    static let tag = "mac:e7-8f-13-56-24-ce"
    /// The stays, region by region, 90 s each, the tag held 1.5 m from the region's gateway.
    static let regions = ["a", "b", "c"]
    static let gatewayOf = ["a": "gw-a", "b": "gw-b", "c": "gw.hall-c"]
    static let stay = 90.0

    /// What each gateway hears of the tag (two adverts a second): a log-distance model
    /// (−59 dBm at 1 m, exponent 2.2) with ±3 dB of scatter, gw-b reading 9 dB hot.
    static func walk(start: Double) -> (sightings: String, stays: String) {
        let positions = ["gw-a": 0.0, "gw-b": 10.0, "gw.hall-c": 20.0]
        var seed: UInt64 = 0x5EED
        func scatter() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return (Double(seed >> 11) / Double(1 << 53)) * 6 - 3
        }
        var lines: [String] = []
        var stays: [String] = []
        for (k, region) in regions.enumerated() {
            let begin = start + Double(k) * stay
            let x = positions[gatewayOf[region]!]!
            // Written down with a few seconds' margin at each end, as a careful operator does.
            stays.append(#"{"type":"truth","device":"\#(tag)","region":"\#(region)","entered":\#(begin + 5),"exited":\#(begin + stay - 5)}"#)
            for i in 0..<Int(stay * 2) {
                let t = begin + Double(i) * 0.5
                for gateway in DeployBroker.gateways {
                    let d = (pow(positions[gateway]! - x, 2) + 1.5 * 1.5).squareRoot()
                    var rssi = -59 - 22 * log10(d) + scatter()
                    if gateway == "gw-b" { rssi += 9 }
                    lines.append(#"{"t":\#(t),"gateway":"\#(gateway)","device":"\#(tag)","rssi":\#(Int(rssi.rounded()))}"#)
                }
            }
        }
        return (lines.joined(separator: "\n") + "\n", stays.joined(separator: "\n") + "\n")
    }

    @Test("the recorded walk finds the gateway that reads 9 dB hot, whatever order its batches were recorded in")
    func walkTestRecipe() throws {
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let broker = try DeployBroker.start()
        defer { broker.stop() }
        let p = broker.prefix
        let dir = broker.directory
        // The walk ended a minute ago (the edges check that evidence is not from the future).
        let start = Date().timeIntervalSince1970 - Double(Self.regions.count) * Self.stay - 60
        let (sightings, stays) = Self.walk(start: start)
        let input = dir.appendingPathComponent("walk-sightings.jsonl")
        try sightings.write(to: input, atomically: true, encoding: .utf8)
        let staysFile = dir.appendingPathComponent("stays.jsonl")
        try stays.write(to: staysFile, atomically: true, encoding: .utf8)

        // 1. The recipe's recording: the aggregator's account, the recipe's topic filter, a session
        //    that keeps what arrives while it is away.
        let filter = ["\(p)/gateways/+/sightings/#"]
        try broker.openSession(broker.connection(DeployBroker.aggregatorUser, tls: true), clientID: "walk", topics: filter)
        // 2. Each gateway's agent, with its own account over TLS, one after another.
        for gateway in DeployBroker.gateways {
            let edge = try DeployEdgeTests.runEdge(broker, gateway: gateway, account: DeployBroker.gatewayUser(gateway), replay: input,
                                                   timeout: 120)
            try #require(edge.status == 0 && !edge.timedOut, "\(edge)")
        }
        let received = try broker.collect(broker.connection(DeployBroker.aggregatorUser, tls: true), clientID: "walk", topics: filter,
                                          skipRetained: true)
        #expect(!broker.log.contains("Denied"), "a publish or subscription outside the ACLs:\n\(broker.log)")
        // mosquitto_sub without -v writes the payloads only, one batch per line.
        var payloads: [String] = []
        for line in received {
            let parts = line.split(separator: " ", maxSplits: 1)
            try #require(parts.count == 2 && parts[0].hasPrefix("\(p)/gateways/") && parts[0].hasSuffix("/sightings"), "\(line)")
            payloads.append(String(parts[1]))
        }
        // One batch per gateway and second of the walk (an edge's last window may be cut short).
        let seconds = Int(Double(Self.regions.count) * Self.stay)
        #expect(payloads.count >= DeployBroker.gateways.count * (seconds - 2), "\(payloads.count) batches recorded")
        let walk = dir.appendingPathComponent("walk.jsonl")
        try (payloads.joined(separator: "\n") + "\n").write(to: walk, atomically: true, encoding: .utf8)

        // 3. The calibration the recipe runs, first without --write.
        let run = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", broker.siteURL.path, "--batches",
                                               "--input", walk.path, "--truth", staysFile.path])
        #expect(run.status == 0, "\(run.output)")
        #expect(!run.output.contains("earlier than input already processed"), "batches skipped as late:\n\(run.output)")
        func deviation(_ gateway: String) throws -> Double {
            let row = try #require(run.output.split(separator: "\n").first { $0.hasPrefix(gateway + " ") }, "\(run.output)")
            return try #require(Double(row.split(separator: " ")[1]), "no deviation fitted for \(gateway): \(row)\n\(run.output)")
        }
        #expect(try deviation("gw-b") > 5, "gw-b reads 9 dB hot:\n\(run.output)")
        #expect(abs(try deviation("gw-a")) < 4, "\(run.output)")
        #expect(abs(try deviation("gw.hall-c")) < 4, "\(run.output)")
        #expect(!run.output.contains("stays in which the engine placed the tag elsewhere"), "\(run.output)")
        #expect(!run.output.contains("mac:"), "no device ids in the output")

        // With --write the site file gets gw-b's correction and still loads.
        let written = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", broker.siteURL.path, "--batches",
                                                   "--input", walk.path, "--truth", staysFile.path, "--write"])
        #expect(written.status == 0, "\(written.output)")
        let (loaded, _) = try SiteLoader.load(path: broker.siteURL.path)
        #expect(try #require(loaded.calibration.gatewayOffsetsDB["gw-b"], "no offset written for gw-b") < -2)
    }
}
