import Testing
import WaymarkCore
import WaymarkHomeAssistant

@Suite struct HomeAssistantNamesTests {
    @Test("slugs use Home Assistant's id alphabet and never map two ids to one")
    func slugs() {
        let inputs = ["gw.lobby", "gw_lobby", "gw__lobby", "gw_2elobby", "gw-lobby", "ibeacon:e2c5:1:7", "_", "__", "._", "_."]
        let slugs = inputs.map(HomeAssistantNames.slug)
        #expect(Set(slugs).count == inputs.count)
        for s in slugs {
            #expect(s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D })
        }
        #expect(HomeAssistantNames.slug("gw-lobby") == "gw-lobby")
        #expect(HomeAssistantNames.slug("a.b_c:d") == "a_2eb__c_3ad")
    }

    @Test("discovery topics follow <prefix>/<component>/<node id>/<object id>/config")
    func topics() {
        let n = HomeAssistantNames(site: "demo-museum", topicPrefix: "waymark/v1/demo-museum", discoveryPrefix: "homeassistant")
        #expect(n.nodeID == "waymark_demo-museum")
        #expect(n.configTopic(component: "sensor", objectID: n.regionObjectID("hall-a"))
                == "homeassistant/sensor/waymark_demo-museum/region_hall-a_occupancy/config")
        #expect(n.allConfigs == "homeassistant/+/waymark_demo-museum/+/config")
        #expect(n.uniqueID(n.gatewayObjectID("gw-lobby")) == "waymark_demo-museum_gateway_gw-lobby_connectivity")
        #expect(n.bridgeStatus == "waymark/v1/demo-museum/homeassistant/status")
        #expect(n.topics.aggregatorStatus == "waymark/v1/demo-museum/aggregator/status")
    }
}
