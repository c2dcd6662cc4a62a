import Foundation
import Testing
import WaymarkCore
import WaymarkHomeAssistant

/// The Home Assistant output's state machine: device states in, entity states, occupancy and
/// removals out.
@Suite struct HomeAssistantBridgeTests {
    func bridge(_ devices: [HomeAssistantDevice] = [.init(id: HATestSite.alice)]) throws -> HomeAssistantBridge {
        HomeAssistantBridge(site: try HATestSite.site(), settings: HATestSite.settings(devices))
    }

    func stateTopic(_ d: DeviceID) -> String { "waymark/v1/demo-museum/devices/\(d)/state" }

    @Test("an allow-listed device's state: the region's name, its attributes; not_home outside every region")
    func deviceState() throws {
        var b = try bridge()
        let out = b.handle(topic: stateTopic(HATestSite.alice), payload: HATestSite.state(HATestSite.alice, region: "hall-a"))
        let p = try #require(out.first)
        #expect(out.count == 1 && p.retain)
        #expect(p.topic == "waymark/v1/demo-museum/homeassistant/devices/\(HATestSite.alice)/state")
        let o = try HATestSite.object(p.payload)
        #expect(o["state"] as? String == "Hall A")
        let a = try #require(o["attributes"] as? [String: Any])
        #expect(a["region"] as? String == "hall-a")
        #expect(a["floor"] as? Int == 1)
        #expect(a["distance_m"] as? Double == 1.8)
        #expect(a["proximity"] as? String == "near")
        #expect(a["confidence"] as? Double == 0.93)
        let gone = b.handle(topic: stateTopic(HATestSite.alice), payload: HATestSite.state(HATestSite.alice, region: nil))
        let o2 = try HATestSite.object(try #require(gone.first).payload)
        #expect(o2["state"] as? String == "not_home")
        #expect((o2["attributes"] as? [String: Any])?["region"] is NSNull)
    }

    @Test("nothing is published about a device that is not allow-listed; an unchanged state is not republished")
    func privacyAndChanges() throws {
        var b = try bridge()
        #expect(b.handle(topic: stateTopic(HATestSite.bob), payload: HATestSite.state(HATestSite.bob, region: "lobby")).isEmpty)
        #expect(b.handle(topic: stateTopic(HATestSite.alice), payload: HATestSite.state(HATestSite.alice, region: "lobby")).count == 1)
        #expect(b.handle(topic: stateTopic(HATestSite.alice), payload: HATestSite.state(HATestSite.alice, region: "lobby", distance: 1.83)).isEmpty,
                "1.84 and 1.83 m both show as 1.8 m")
        #expect(!b.everything().contains { $0.topic.contains(HATestSite.bob.rawValue) })
    }

    @Test("occupancy counts every device (allow-listed or not) in its current region, and reports changes")
    func occupancy() throws {
        var b = try bridge()
        _ = b.handle(topic: stateTopic(HATestSite.alice), payload: HATestSite.state(HATestSite.alice, region: "lobby"))
        _ = b.handle(topic: stateTopic(HATestSite.bob), payload: HATestSite.state(HATestSite.bob, region: "lobby"))
        _ = b.handle(topic: stateTopic(HATestSite.carol), payload: HATestSite.state(HATestSite.carol, region: "hall-a"))
        #expect(b.occupancy(of: "lobby") == 2 && b.occupancy(of: "hall-a") == 1 && b.occupancy(of: "entrance") == 0)
        let first = b.takeOccupancy()
        #expect(Dictionary(uniqueKeysWithValues: first.map { ($0.topic, String(decoding: $0.payload, as: UTF8.self)) }) == [
            "waymark/v1/demo-museum/homeassistant/regions/lobby/occupancy": "2",
            "waymark/v1/demo-museum/homeassistant/regions/hall-a/occupancy": "1",
        ])
        _ = b.handle(topic: stateTopic(HATestSite.bob), payload: HATestSite.state(HATestSite.bob, region: nil))
        _ = b.handle(topic: stateTopic(HATestSite.carol), payload: [])  // retained state cleared
        #expect(b.occupancy(of: "lobby") == 1 && b.occupancy(of: "hall-a") == 0)
        #expect(Set(b.takeOccupancy().map(\.topic)) == [
            "waymark/v1/demo-museum/homeassistant/regions/lobby/occupancy", "waymark/v1/demo-museum/homeassistant/regions/hall-a/occupancy",
        ])
        #expect(b.takeOccupancy().isEmpty)
    }

    @Test("configurations a previous run left that are no longer wanted are removed, with their retained state")
    func staleRemovals() throws {
        // A previous run published Alice and Bob; this one allow-lists Alice only.
        let previous = try bridge([.init(id: HATestSite.alice), .init(id: HATestSite.bob)])
        var b = try bridge()
        for p in previous.discovery.configurations() { _ = b.handle(topic: p.topic, payload: p.payload) }
        let removals = b.staleRemovals()
        let bobConfig = try #require(previous.discovery.configurations().first { $0.topic.contains("_3a1_3a8_region") }).topic
        #expect(removals == [.removal(bobConfig), .removal("waymark/v1/demo-museum/homeassistant/devices/\(HATestSite.bob)/state"),
                             .removal("waymark/v1/demo-museum/homeassistant/devices/\(HATestSite.bob)/availability")])
        #expect(removals.allSatisfy { $0.payload.isEmpty && $0.retain })
    }

    @Test("Home Assistant's birth message asks for everything again; malformed states are counted, not fatal")
    func birthAndMalformed() throws {
        var b = try bridge()
        let again = b.handle(topic: "homeassistant/status", payload: Array("online".utf8))
        // The configurations, Alice's and the site's availability, three regions' occupancy.
        #expect(again.count == b.discovery.configurations().count + 2 + 3)
        #expect(b.handle(topic: "homeassistant/status", payload: Array("offline".utf8)).isEmpty)
        #expect(b.handle(topic: stateTopic(HATestSite.alice), payload: Array("not json".utf8)).isEmpty)
        #expect(b.malformedStates == 1)
    }

    func availabilityTopic(_ d: DeviceID) -> String { "waymark/v1/demo-museum/homeassistant/devices/\(d)/availability" }
    static let siteAvailability = "waymark/v1/demo-museum/homeassistant/availability"

    /// What the publications say per availability topic ("online" / "offline").
    func availability(_ out: [HAPublication]) throws -> [String: String] {
        var shown: [String: String] = [:]
        for p in out where p.topic.hasSuffix("availability") {
            #expect(p.retain)
            shown[p.topic] = try #require(try HATestSite.object(p.payload)["state"] as? String)
        }
        return shown
    }

    func status(online: Bool, shards: [Int]? = nil, count: Int? = nil) -> [UInt8] {
        ServiceStatus(state: online ? .online : .offline, service: "waymark-aggregator", site: "demo-museum",
                      shards: shards, shardCount: count).jsonBytes
    }

    @Test("unsharded: the entities are available while the aggregator runs, not before and not after its last will")
    func availabilityFollowsTheAggregator() throws {
        var b = try bridge()
        #expect(try availability(b.everything()) == [availabilityTopic(HATestSite.alice): "offline", Self.siteAvailability: "offline"],
                "no aggregator heard of yet")
        #expect(b.subscriptions.contains("waymark/v1/demo-museum/aggregator/status"))
        #expect(b.subscriptions.contains("waymark/v1/demo-museum/aggregator/status/+"))
        let up = b.handle(topic: "waymark/v1/demo-museum/aggregator/status", payload: status(online: true))
        #expect(try availability(up) == [availabilityTopic(HATestSite.alice): "online", Self.siteAvailability: "online"])
        #expect(b.handle(topic: "waymark/v1/demo-museum/aggregator/status", payload: status(online: true)).isEmpty, "no change, nothing sent")
        #expect(b.handle(topic: "waymark/v1/demo-museum/aggregator/status", payload: Array("{not json".utf8)).isEmpty,
                "an unreadable status changes nothing")
        let will = b.handle(topic: "waymark/v1/demo-museum/aggregator/status", payload: Array(#"{"state":"offline"}"#.utf8))
        #expect(try availability(will) == [availabilityTopic(HATestSite.alice): "offline", Self.siteAvailability: "offline"])
        #expect(try availability(b.everything())[availabilityTopic(HATestSite.alice)] == "offline")
    }

    @Test("sharded: a device is available while its own shard's aggregator runs; the site's occupancy needs every shard's")
    func availabilityFollowsTheShard() throws {
        let layout = try #require(ShardLayout(count: 2))
        // Two allow-listed devices, one in each shard.
        let ids = (1...40).compactMap { DeviceID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:2:\($0)") }
        let zero = try #require(ids.first { layout.shard(of: $0) == 0 }), one = try #require(ids.first { layout.shard(of: $0) == 1 })
        var b = try bridge([.init(id: zero), .init(id: one)])
        // The owner of shard 0 comes up first: only its device is available, the site is not.
        let first = b.handle(topic: "waymark/v1/demo-museum/aggregator/status", payload: status(online: true, shards: [0], count: 2))
        #expect(try availability(first) == [availabilityTopic(zero): "online", availabilityTopic(one): "offline", Self.siteAvailability: "offline"])
        let second = b.handle(topic: "waymark/v1/demo-museum/aggregator/status/1", payload: status(online: true, shards: [1], count: 2))
        #expect(try availability(second) == [availabilityTopic(one): "online", Self.siteAvailability: "online"])
        // Shard 1's aggregator is killed (its last will): its device goes, shard 0's stays.
        let killed = b.handle(topic: "waymark/v1/demo-museum/aggregator/status/1", payload: Array(#"{"state":"offline"}"#.utf8))
        #expect(try availability(killed) == [availabilityTopic(one): "offline", Self.siteAvailability: "offline"])
        // Shard 1 moves to a new aggregator that owns both (the stopped one's status is cleared).
        _ = b.handle(topic: "waymark/v1/demo-museum/aggregator/status/1", payload: [])
        let moved = b.handle(topic: "waymark/v1/demo-museum/aggregator/status", payload: status(online: true, shards: [0, 1], count: 2))
        #expect(try availability(moved) == [availabilityTopic(one): "online", Self.siteAvailability: "online"])
        // Statuses of other services or topics below an aggregator's key are not aggregators.
        #expect(b.handle(topic: "waymark/v1/demo-museum/aggregator/status/1/x", payload: status(online: false)).isEmpty)
        let other = ServiceStatus(state: .offline, service: "waymark-homeassistant", site: "demo-museum").jsonBytes
        #expect(b.handle(topic: "waymark/v1/demo-museum/aggregator/status", payload: other).isEmpty)
    }
}
