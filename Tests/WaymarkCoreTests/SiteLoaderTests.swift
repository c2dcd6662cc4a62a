import Testing
import WaymarkConfig
import WaymarkCore

@Suite struct SiteLoaderTests {
    static let exampleYAML = """
    site: demo-museum
    gateways:
      - id: gw-entrance
        position: [0.0, 0.0]      # metres
        floor: 0
        rssi_offset_db: 0
      - id: gw-lobby
        position: [8.0, 0.0]
      - id: gw-hall-a
        position: [8.0, 12.0]
    regions:
      - id: entrance
        name: Main entrance
        gateways: [gw-entrance]
        radius_m: 4.0
        ibeacon: { uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 1 }
      - id: lobby
        gateways: [gw-lobby]
      - id: hall-a
        name: Hall A
        gateways: [gw-hall-a]
        radius_m: 6.0
    edges:
      - [entrance, lobby]                      # length defaults to the distance between positions
      - { from: lobby, to: hall-a, length_m: 12.5 }
    tracking:
      ibeacon_uuids: ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"]
      macs: ["e7:8f:13:56:24:ce"]
    fusion:
      exit_delay_s: 30
      monitored_set_size: 20
    """

    @Test func acceptsTheIssueExampleAsWritten() throws {
        let (site, warnings) = try SiteLoader.parse(yaml: Self.exampleYAML, file: "site.yaml")
        #expect(warnings.isEmpty)
        #expect(site.id == "demo-museum")
        #expect(site.gateways.map(\.id) == ["gw-entrance", "gw-lobby", "gw-hall-a"])
        #expect(site.regions.map(\.id) == ["entrance", "lobby", "hall-a"])
        #expect(site.region("entrance")?.ibeacon?.description == "e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1")
        #expect(site.region("lobby")?.radiusM == SiteValidator.defaultRadiusM)
        // [entrance, lobby] has no length: the distance between the gateways (8 m).
        #expect(site.edges[0].lengthM == 8.0)
        #expect(site.edges[1].lengthM == 12.5)
        #expect(site.fusion.exitDelayS == 30)
        #expect(site.tracking.macs == [[0xe7, 0x8f, 0x13, 0x56, 0x24, 0xce]])
    }

    @Test func shortestPathsAndMonitoredSets() throws {
        let (site, _) = try SiteLoader.parse(yaml: Self.exampleYAML)
        let entrance = site.regionIndex("entrance")!, hall = site.regionIndex("hall-a")!
        let path = try #require(site.graph.shortestPath(from: entrance, to: hall))
        #expect(path.regions.map { site.regions[$0].id } == ["entrance", "lobby", "hall-a"])
        #expect(path.lengthM == 20.5)
        let set = site.graph.nearest(to: hall, limit: 2)
        #expect(set.map { site.regions[$0.region].id } == ["hall-a", "lobby"])
        #expect(!site.graph.areAdjacent(entrance, hall))
    }

    private func errors(_ yaml: String) -> [SiteDiagnostic] {
        do {
            _ = try SiteLoader.parse(yaml: yaml, file: "site.yaml")
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }
        }
    }

    @Test func reportsUnknownGatewayWithPathAndKnownChoices() {
        let yaml = Self.exampleYAML.replacingOccurrences(of: "gateways: [gw-hall-a]", with: "gateways: [gw-hall-b]")
        let e = errors(yaml)
        #expect(e.count == 1)
        #expect(e.first?.path == "regions[2].gateways[0]")
        #expect(e.first?.description.contains("site.yaml: regions[2].gateways[0]: error: unknown gateway 'gw-hall-b'") == true)
        #expect(e.first?.message.contains("gw-hall-a") == true)
    }

    @Test func reportsInvalidUUIDDuplicateIDsNegativeLengthAndMissingGateways() {
        var yaml = Self.exampleYAML
        yaml = yaml.replacingOccurrences(of: "uuid: \"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\"", with: "uuid: \"E2C56DB5-DFFB-48D2-B060\"")
        yaml = yaml.replacingOccurrences(of: "  - id: lobby\n    gateways: [gw-lobby]", with: "  - id: lobby\n    gateways: []")
        yaml = yaml.replacingOccurrences(of: "- id: gw-lobby", with: "- id: gw-entrance")
        yaml = yaml.replacingOccurrences(of: "length_m: 12.5", with: "length_m: -3")
        let paths = Set(errors(yaml).map(\.path))
        #expect(paths.contains("regions[0].ibeacon.uuid"))
        #expect(paths.contains("regions[1].gateways"))
        #expect(paths.contains("gateways[1].id"))
        #expect(paths.contains("edges[1].length_m"))
    }

    @Test func unknownKeysSuggestTheClosestKnownKey() {
        let yaml = Self.exampleYAML.replacingOccurrences(of: "exit_delay_s: 30", with: "exit_delay: 30")
        let e = errors(yaml)
        #expect(e.map(\.path) == ["fusion.exit_delay"])
        #expect(e.first?.message.contains("did you mean 'exit_delay_s'") == true)
    }

    @Test func simulationSectionChoosesTheRadioProfileAndWalls() throws {
        let (site, _) = try SiteLoader.parse(yaml: Self.exampleYAML + "\nsimulation:\n  radio: harsh\n  walls: false\n")
        #expect(site.simulation.radio == .harsh)
        #expect(!site.simulation.walls)
        let (plain, _) = try SiteLoader.parse(yaml: Self.exampleYAML)
        #expect(plain.simulation.radio == nil && plain.simulation.walls)
    }

    @Test func unknownRadioProfileNamesTheFieldAndTheChoices() {
        let e = errors(Self.exampleYAML + "\nsimulation:\n  radio: outdoor\n")
        #expect(e.map(\.path) == ["simulation.radio"])
        #expect(e.first?.message.contains("unknown radio profile 'outdoor'; use one of ideal, indoor, harsh") == true)
        let typo = errors(Self.exampleYAML + "\nsimulation:\n  radios: indoor\n")
        #expect(typo.map(\.path) == ["simulation.radios"])
        #expect(typo.first?.message.contains("did you mean 'radio'") == true)
    }

    @Test func typeErrorsNameTheField() {
        let yaml = Self.exampleYAML.replacingOccurrences(of: "radius_m: 6.0", with: "radius_m: wide")
        let e = errors(yaml)
        #expect(e.first?.path == "regions[2].radius_m")
    }

    @Test func disconnectedGraphIsAWarningNotAnError() throws {
        let yaml = Self.exampleYAML.replacingOccurrences(of: "  - { from: lobby, to: hall-a, length_m: 12.5 }\n", with: "")
        let (_, warnings) = try SiteLoader.parse(yaml: yaml)
        #expect(warnings.count == 1)
        #expect(warnings.first?.path == "edges")
        #expect(warnings.first?.message.contains("split into 2 parts") == true)
    }

    @Test func aGatewayInsideARegionThatNoRegionListsIsAWarning() throws {
        // A second gateway in hall A (6-m radius around the gateway at 8, 12), listed nowhere, and
        // one in no region's disc (a corridor): only the first is worth a word.
        let yaml = Self.exampleYAML.replacingOccurrences(of: "  - id: gw-hall-a\n    position: [8.0, 12.0]\n", with: """
          - id: gw-hall-a
            position: [8.0, 12.0]
          - id: gw-hall-a-east
            position: [11.0, 13.0]
          - id: gw-corridor
            position: [30.0, 30.0]

        """)
        let (site, warnings) = try SiteLoader.parse(yaml: yaml)
        #expect(site.gateways.count == 5)
        #expect(warnings.map(\.path) == ["gateways[3]"])
        #expect(warnings.first?.message.contains("gateway 'gw-hall-a-east' anchors no region but lies within region 'hall-a'") == true)
        #expect(warnings.first?.message.contains("add it to the gateways of region 'hall-a'") == true)
    }

    @Test func aPlanInAnotherUnitThanMetresIsAWarning() throws {
        // The example in centimetres: its gateways 800–1,200 apart.
        var yaml = Self.exampleYAML
        for (metres, centimetres) in [("[0.0, 0.0]", "[0, 0]"), ("[8.0, 0.0]", "[800, 0]"), ("[8.0, 12.0]", "[800, 1200]")] {
            yaml = yaml.replacingOccurrences(of: "position: \(metres)", with: "position: \(centimetres)")
        }
        #expect(yaml != Self.exampleYAML)
        let (site, warnings) = try SiteLoader.parse(yaml: yaml)
        #expect(site.medianGatewaySpacing == 800)
        #expect(warnings.map(\.path) == ["gateways"])
        #expect(warnings.first?.message.contains("a median of 800 m from their nearest neighbour") == true)
        // The same plan in metres: a median of 8 m, no word.
        let (metres, none) = try SiteLoader.parse(yaml: Self.exampleYAML)
        #expect(metres.medianGatewaySpacing == 8)
        #expect(none.isEmpty)
    }

    @Test func monitoredSetTiesAreDeterministic() throws {
        // A star: hub with 4 spokes of equal length; the set of size 3 takes the lowest indices.
        let yaml = """
        site: star
        gateways: [{id: g, position: [0, 0]}]
        regions:
          - {id: hub, gateways: [g]}
          - {id: a, gateways: [g]}
          - {id: b, gateways: [g]}
          - {id: c, gateways: [g]}
          - {id: d, gateways: [g]}
        edges:
          - {from: hub, to: d, length_m: 5}
          - {from: hub, to: c, length_m: 5}
          - {from: hub, to: b, length_m: 5}
          - {from: hub, to: a, length_m: 5}
        tracking: {macs: ["00:11:22:33:44:55"]}
        """
        let (site, _) = try SiteLoader.parse(yaml: yaml)
        let ids = site.graph.nearest(to: 0, limit: 3).map { site.regions[$0.region].id }
        #expect(ids == ["hub", "a", "b"])
    }
}
