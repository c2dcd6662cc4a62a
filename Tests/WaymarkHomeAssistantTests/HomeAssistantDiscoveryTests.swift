import Foundation
import Testing
import WaymarkCore
import WaymarkHomeAssistant

/// The discovery configurations against Home Assistant's documented MQTT discovery schema.
@Suite struct HomeAssistantDiscoveryTests {
    @Test("one configuration per allow-listed device, region, gateway and the aggregator; retained; unique ids")
    func inventory() throws {
        let d = HomeAssistantDiscovery(site: try HATestSite.site(),
                                       settings: HATestSite.settings([.init(id: HATestSite.alice, name: "Alice's badge")]))
        let configs = d.configurations()
        #expect(configs.count == 1 + 3 + 3 + 1)
        #expect(configs.allSatisfy { $0.retain })
        let objects = try configs.map { try HATestSite.object($0.payload) }
        let ids = objects.compactMap { $0["unique_id"] as? String }
        #expect(ids.count == configs.count && Set(ids).count == ids.count)
        for (c, o) in zip(configs, objects) {
            let levels = c.topic.split(separator: "/")
            #expect(levels.count == 5 && levels[0] == "homeassistant" && levels[4] == "config")
            #expect(["sensor", "binary_sensor"].contains(String(levels[1])))
            // node id and object id only from [a-zA-Z0-9_-]
            for level in levels[2...3] {
                #expect(level.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D })
            }
            #expect(o["unique_id"] as? String == "\(levels[2])_\(levels[3])", "best practice: the object id is the unique id")
            #expect(o["state_topic"] is String)
            #expect(o["name"] is String)
            let device = try #require(o["device"] as? [String: Any])
            #expect((device["identifiers"] as? [String])?.isEmpty == false)
            #expect((o["origin"] as? [String: Any])?["name"] as? String == "Waymark")
        }
    }

    @Test("a device's sensor: region name as state, attributes by template, availability from its shard's aggregator and the bridge")
    func deviceSensor() throws {
        let d = HomeAssistantDiscovery(site: try HATestSite.site(),
                                       settings: HATestSite.settings([.init(id: HATestSite.alice, name: "Alice's badge")]))
        let config = try #require(d.configurations().first { $0.topic.contains("/device_") })
        #expect(config.topic == "homeassistant/sensor/waymark_demo-museum/device_ibeacon_3ae2c56db5-dffb-48d2-b060-d0f5a71096e0_3a1_3a7_region/config")
        let o = try HATestSite.object(config.payload)
        #expect(o["state_topic"] as? String == "waymark/v1/demo-museum/homeassistant/devices/\(HATestSite.alice)/state")
        #expect(o["value_template"] as? String == "{{ value_json.state }}")
        #expect(o["json_attributes_topic"] as? String == o["state_topic"] as? String)
        #expect(o["json_attributes_template"] as? String == "{{ value_json.attributes | tojson }}")
        #expect(o["availability_mode"] as? String == "all")
        let availability = try #require(o["availability"] as? [[String: Any]])
        #expect(availability.compactMap { $0["topic"] as? String } == [
            "waymark/v1/demo-museum/homeassistant/devices/\(HATestSite.alice)/availability", "waymark/v1/demo-museum/homeassistant/status",
        ])
        #expect(availability.allSatisfy { $0["value_template"] as? String == "{{ value_json.state }}" })
        let device = try #require(o["device"] as? [String: Any])
        #expect(device["name"] as? String == "Alice's badge")
        #expect(device["via_device"] as? String == "waymark_demo-museum")
        #expect(o["state_class"] == nil, "a region name is not a measurement")
    }

    @Test("occupancy is a measurement in devices, suggesting the region as area; gateways are diagnostic connectivity")
    func regionAndGateway() throws {
        let d = HomeAssistantDiscovery(site: try HATestSite.site(), settings: HATestSite.settings([]))
        let configs = d.configurations()
        let hall = try HATestSite.object(try #require(configs.first { $0.topic.contains("region_hall-a_") }).payload)
        #expect(hall["state_class"] as? String == "measurement")
        #expect(hall["unit_of_measurement"] as? String == "devices")
        #expect((hall["device"] as? [String: Any])?["suggested_area"] as? String == "Hall A")
        let gw = try HATestSite.object(try #require(configs.first { $0.topic.contains("gateway_gw-lobby_") }).payload)
        #expect(gw["device_class"] as? String == "connectivity")
        #expect(gw["entity_category"] as? String == "diagnostic")
        #expect(gw["state_topic"] as? String == "waymark/v1/demo-museum/gateways/gw-lobby/status")
        #expect(gw["value_template"] as? String == "{{ 'ON' if value_json.state == 'online' else 'OFF' }}")
        #expect((gw["device"] as? [String: Any])?["suggested_area"] as? String == "lobby")
        #expect(!configs.contains { $0.topic.contains("/device_") }, "nothing about any device without an allow-list")
    }

    @Test("allow-list entries: an id, an id with a name; pseudonyms and typos are refused with the fix")
    func allowList() throws {
        #expect(try HomeAssistantDevice.parse("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7").get() == .init(id: HATestSite.alice))
        #expect(try HomeAssistantDevice.parse(" mac:c4-7c-8d-6a-12-34 = Car keys ").get().name == "Car keys")
        guard case .failure(let anon) = HomeAssistantDevice.parse("anon:0011223344556677") else { Issue.record("accepted"); return }
        #expect(anon.description.contains("changes every day"))
        guard case .failure(let typo) = HomeAssistantDevice.parse("ibeacon:E2C56DB5:1:7") else { Issue.record("accepted"); return }
        #expect(typo.description.contains("is not a device id") && typo.description.contains("mac:aa-bb-cc-dd-ee-ff"))
    }
}
