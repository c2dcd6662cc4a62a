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
        #expect(json == #"{"version":1,"devices":1,"occupancy":{"\#(region)":1},"gateways":{}}"#)
    }
}
