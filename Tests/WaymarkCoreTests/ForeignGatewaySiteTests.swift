import Testing
import WaymarkConfig
import WaymarkCore

/// The site file's `foreign_gateways:` section: receivers of other projects as gateways.
@Suite struct ForeignGatewaySiteTests {
    func load(_ section: String) throws(SiteError) -> (Site, [SiteDiagnostic]) {
        try SiteLoader.parse(yaml: SiteLoaderTests.exampleYAML + "\nforeign_gateways:\n" + section, file: "site.yaml")
    }

    func errors(_ section: String) -> [String] {
        do {
            _ = try load(section)
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }.map(\.description)
        }
    }

    @Test("ESPresense rooms and Theengs topics map to gateways; status topics default from the receiver's conventions")
    func accepted() throws {
        let (site, warnings) = try load("""
          - { gateway: gw-entrance, espresense: entrance }
          - { gateway: gw-lobby, theengs: home/TheengsGateway/BTtoMQTT }
          - { gateway: gw-hall-a, theengs: home/OMG_ESP32_BLE/BTtoMQTT, status_topic: home/OMG_ESP32_BLE/LWT }
        """)
        #expect(warnings.isEmpty)
        #expect(site.foreignGateways.map(\.gateway) == ["gw-entrance", "gw-lobby", "gw-hall-a"])
        #expect(site.foreignGateways[0].source == .espresense(room: "entrance"))
        #expect(site.foreignGateways[0].statusTopic(espresensePrefix: "espresense") == "espresense/rooms/entrance/status")
        #expect(site.foreignGateways[1].statusTopic(espresensePrefix: "espresense") == "home/TheengsGateway/LWT")
        #expect(site.foreignGateways[2].statusTopic(espresensePrefix: "espresense") == "home/OMG_ESP32_BLE/LWT")
    }

    @Test("each problem names its field and the fix")
    func problems() {
        #expect(errors("  - { gateway: gw-attic, espresense: attic }\n").contains {
            $0.contains("foreign_gateways[0].gateway") && $0.contains("unknown gateway 'gw-attic'") && $0.contains("gw-entrance")
        })
        #expect(errors("  - { gateway: gw-lobby }\n").contains {
            $0.contains("foreign_gateways[0]") && $0.contains("espresense: <room>") && $0.contains("theengs: <publish topic>")
        })
        #expect(errors("  - { gateway: gw-lobby, espresense: lobby, theengs: home/x/BTtoMQTT }\n").contains { $0.contains("both") })
        #expect(errors("  - { gateway: gw-lobby, espresense: \"a/b\" }\n").contains { $0.contains("foreign_gateways[0].espresense") })
        #expect(errors("  - { gateway: gw-lobby, theengs: \"home/+/BTtoMQTT\" }\n").contains {
            $0.contains("foreign_gateways[0].theengs") && $0.contains("without wildcards")
        })
        #expect(errors("""
          - { gateway: gw-lobby, espresense: lobby }
          - { gateway: gw-lobby, espresense: hall }
        """).contains { $0.contains("foreign_gateways[1].gateway") && $0.contains("already fed by foreign_gateways[0]") })
        #expect(errors("""
          - { gateway: gw-lobby, espresense: lobby }
          - { gateway: gw-hall-a, espresense: lobby }
        """).contains { $0.contains("foreign_gateways[1].espresense") && $0.contains("already mapped") })
        #expect(errors("  - { gateway: gw-lobby, espresense: lobby, status_topc: x }\n").contains {
            $0.contains("foreign_gateways[0].status_topc") && $0.contains("did you mean 'status_topic'")
        })
    }

    @Test("warnings: a room that is not a slug, a Theengs topic whose last will cannot be guessed")
    func warnings() throws {
        let (_, warnings) = try load("""
          - { gateway: gw-lobby, espresense: Living Room }
          - { gateway: gw-hall-a, theengs: sensors/ble }
        """)
        #expect(warnings.contains { $0.path == "foreign_gateways[0].espresense" && $0.message.contains("slug") })
        #expect(warnings.contains { $0.path == "foreign_gateways[1].status_topic" && $0.message.contains("status_topic") })
    }
}
