import Foundation
import Testing
@testable import WaymarkConsole
import WaymarkConfig
import WaymarkCore

/// The console's live state from the aggregator's retained messages: what the map counts.
@Suite("Live venue")
struct LiveVenueTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy/examples")

    static func venue() throws -> LiveVenue {
        let site = try SiteLoader.load(path: examples.appendingPathComponent("demo-museum.yaml").path).site
        return LiveVenue(site: site, prefix: "waymark/v1/\(site.id)")
    }

    static func state(_ device: String, region: String?, confidence: Double = 0.9) -> [UInt8] {
        let current = region.map { "\"\($0)\"" } ?? "null"
        let regions = region.map { #"[{"region":"\#($0)","state":"inside","proximity":"near","distance_m":1.5}]"# } ?? "[]"
        return Array(#"{"device":"\#(device)","current_region":\#(current),"confidence":\#(confidence),"regions":\#(regions),"updated_at":1780300000.5}"#.utf8)
    }

    @Test func deviceStatesCountTowardsTheirLiveRegion() throws {
        var venue = try Self.venue()
        let p = venue.prefix
        let region = venue.site.regions[0].id, other = venue.site.regions[1].id
        #expect(venue.apply(topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-01/state", payload: Self.state("mac:aa-bb-cc-dd-ee-01", region: region), retained: true, receivedAt: 0) == nil)
        #expect(venue.apply(topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-02/state", payload: Self.state("mac:aa-bb-cc-dd-ee-02", region: region), retained: false, receivedAt: 0) == nil)
        #expect(venue.occupancy == [region: 2])
        let device = try #require(venue.devices["mac:aa-bb-cc-dd-ee-01"])
        #expect(device.proximity == "near" && device.distanceM == 1.5 && device.confidence == 0.9)

        // Moving on, leaving every region, and a cleared retained state.
        let v = venue.version
        venue.apply(topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-02/state", payload: Self.state("mac:aa-bb-cc-dd-ee-02", region: other), retained: false, receivedAt: 0)
        #expect(venue.occupancy == [region: 1, other: 1])
        #expect(venue.version > v)
        venue.apply(topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-01/state", payload: Self.state("mac:aa-bb-cc-dd-ee-01", region: nil), retained: false, receivedAt: 0)
        #expect(venue.occupancy == [other: 1])
        venue.apply(topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-02/state", payload: [], retained: true, receivedAt: 0)
        #expect(venue.occupancy.isEmpty && venue.devices.count == 1)
    }

    @Test func unreadableOrForeignMessagesChangeNothing() throws {
        var venue = try Self.venue()
        let p = venue.prefix
        #expect(venue.apply(topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-01/state", payload: Array("{not json".utf8), retained: false, receivedAt: 0) == "unreadable device state")
        #expect(venue.apply(topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-01/state", payload: Self.state("mac:aa-bb-cc-dd-ee-09", region: nil), retained: false, receivedAt: 0)
                == "unreadable device state", "the payload's device must be the topic's")
        #expect(venue.apply(topic: "\(p)/gateways/gw-nowhere/status", payload: Array(#"{"state":"online"}"#.utf8), retained: false, receivedAt: 0)
                == "gateway not in the site file")
        #expect(venue.apply(topic: "other/prefix/devices/x/state", payload: Self.state("x", region: nil), retained: false, receivedAt: 0) != nil)
        #expect(venue.version == 0 && venue.devices.isEmpty && venue.gateways.isEmpty)
        #expect(venue.rejected.values.reduce(0, +) == 4)
    }

    @Test func gatewayStatusCarriesHealthAndClockOffset() throws {
        var venue = try Self.venue()
        let gw = venue.site.gateways[0].id
        let payload = Array(#"{"state":"online","gateway":"\#(gw)","version":"1.2","boot":"b1","spool_depth":12,"spool_dropped":0,"scan":"ok","t":1000.0}"#.utf8)
        #expect(venue.apply(topic: "\(venue.prefix)/gateways/\(gw)/status", payload: payload, retained: false, receivedAt: 1002.5) == nil)
        let status = try #require(venue.gateways[gw])
        #expect(status.state == "online" && status.spoolDepth == 12 && status.version == "1.2" && status.clockOffsetS == 2.5)
        venue.apply(topic: "\(venue.prefix)/gateways/\(gw)/status", payload: payload, retained: true, receivedAt: 5000)
        #expect(venue.gateways[gw]?.clockOffsetS == nil, "a retained status's delivery time says nothing about the clock")
        venue.apply(topic: "\(venue.prefix)/gateways/\(gw)/status", payload: Array("offline".utf8), retained: false, receivedAt: 5001)
        #expect(venue.gateways[gw]?.state == "offline")
    }

    @Test func theEventStreamJSONCarriesCountsAndGatewayStates() throws {
        var venue = try Self.venue()
        let region = venue.site.regions[0].id
        venue.apply(topic: "\(venue.prefix)/devices/mac:aa-bb-cc-dd-ee-01/state", payload: Self.state("mac:aa-bb-cc-dd-ee-01", region: region), retained: false, receivedAt: 0)
        let json = ConsoleRoutes.liveJSON(venue)
        #expect(json == #"{"version":1,"devices":1,"occupancy":{"\#(region)":1},"gateways":{},"aggregators":{}}"#)
        let online = ServiceStatus(state: .online, service: "waymark-aggregator", site: venue.site.id, version: "0.1.0", t: 10,
                                   shards: [1], shardCount: 2, instance: "r2")
        venue.apply(topic: "\(venue.prefix)/aggregator/status/1", payload: online.jsonBytes, retained: true, receivedAt: 11)
        #expect(ConsoleRoutes.liveJSON(venue).hasSuffix(#""aggregators":{"1":{"state":"online","shards":[1],"shard_count":2}}}"#))
    }

    func status(_ state: GatewayStatus.State, shards: [Int]? = nil, of count: Int? = nil, t: Double? = 100) -> [UInt8] {
        ServiceStatus(state: state, service: "waymark-aggregator", site: "s", version: "0.1.0", t: t,
                      shards: shards, shardCount: count, instance: shards.map { "run-\($0)" }).jsonBytes
    }

    @Test func aggregatorStatusesShowWhoOwnsEachShard() throws {
        var venue = try Self.venue()
        let base = "\(venue.prefix)/aggregator/status"
        #expect(venue.shardCoverage == nil, "no aggregator heard of yet")
        // One unsharded aggregator owns the whole site.
        #expect(venue.apply(topic: base, payload: status(.online), retained: true, receivedAt: 101) == nil)
        #expect(venue.aggregators[""]?.shards == nil && venue.aggregators[""]?.statusTime == 100)
        #expect(venue.shardCoverage == .init(count: 1, owners: [[""]], declaredCounts: []))
        #expect(GatewaysPage.aggregators(venue).contains("The whole site has one running aggregator."))

        // Four shards on three aggregators: shard 0's owner on the base topic, the others below it.
        venue.apply(topic: base, payload: status(.online, shards: [0, 1], of: 4), retained: true, receivedAt: 102)
        venue.apply(topic: base + "/2", payload: status(.online, shards: [2], of: 4), retained: true, receivedAt: 102)
        #expect(venue.apply(topic: base + "/3", payload: status(.online, shards: [3], of: 4), retained: true, receivedAt: 102) == nil)
        var coverage = try #require(venue.shardCoverage)
        #expect(coverage.count == 4 && coverage.owners == [[""], [""], ["2"], ["3"]] && coverage.unowned.isEmpty && coverage.doubled.isEmpty)
        let page = GatewaysPage.aggregators(venue)
        #expect(page.contains("Each of the 4 shards has one running aggregator.") && page.contains("0, 1 of 4") && !page.contains("class=\"error\""))

        // Shard 3's owner goes (its last will), and another one takes shard 2 as well.
        venue.apply(topic: base + "/3", payload: status(.offline, shards: [3], of: 4, t: nil), retained: true, receivedAt: 103)
        venue.apply(topic: base + "/2-3", payload: status(.online, shards: [2, 3], of: 4), retained: true, receivedAt: 104)
        coverage = try #require(venue.shardCoverage)
        #expect(coverage.unowned.isEmpty && coverage.doubled == [2] && coverage.owners[2] == ["2", "2-3"])
        #expect(GatewaysPage.aggregators(venue).contains("Shard 2 is owned by more than one running aggregator"))
        venue.apply(topic: base + "/2-3", payload: [], retained: true, receivedAt: 105)   // a cleared retained status
        #expect(venue.aggregators["2-3"] == nil)
        #expect(try #require(venue.shardCoverage).unowned == [3])
        #expect(GatewaysPage.aggregators(venue).contains("No running aggregator owns shard 3 of 4"))

        // Another shard count is a misconfiguration; the bare word works as a will; other services and junk are refused.
        venue.apply(topic: base + "/5", payload: status(.online, shards: [5], of: 8), retained: false, receivedAt: 106)
        #expect(try #require(venue.shardCoverage).declaredCounts == [4, 8])
        #expect(GatewaysPage.aggregators(venue).contains("different numbers of shards (4, 8)"))
        venue.apply(topic: base + "/5", payload: Array("offline".utf8), retained: false, receivedAt: 107)
        #expect(venue.aggregators["5"]?.state == "offline" && venue.aggregators["5"]?.shards == nil)
        let version = venue.version
        let ha = ServiceStatus(state: .online, service: "waymark-homeassistant", site: "s").jsonBytes
        for bad in [ha, Array(#"{"state":"online","shards":[1,"x"]}"#.utf8), Array(#"{"state":"maybe"}"#.utf8), Array("{".utf8)] {
            #expect(venue.apply(topic: base + "/9", payload: bad, retained: false, receivedAt: 108) == "unreadable aggregator status")
        }
        #expect(venue.version == version && venue.aggregators["9"] == nil)
        #expect(venue.apply(topic: base + "/1/x", payload: status(.online), retained: false, receivedAt: 109) == "unexpected topic")

        // Every aggregator offline.
        for key in Array(venue.aggregators.keys) { venue.apply(topic: key.isEmpty ? base : base + "/" + key, payload: status(.offline, t: nil), retained: true, receivedAt: 110) }
        #expect(venue.shardCoverage == nil)
        #expect(GatewaysPage.aggregators(venue).contains("No aggregator is online"))
        #expect(venue.topics.contains(base) && venue.topics.contains(base + "/+"))
    }
}
