import WaymarkConfig
import WaymarkCore
@testable import WaymarkSimulation

/// Small sites and helpers shared by the simulation tests.
enum TestSites {
    /// One gateway at the origin; regions are irrelevant for radio tests.
    static let single = """
        site: radio-test
        gateways:
          - { id: gw-0, position: [0, 0] }
        regions:
          - { id: r0, gateways: [gw-0], radius_m: 3 }
        tracking:
          ibeacon_uuids: ["F7826DA6-4FA2-4E98-8024-BC5B71E0893E"]
        """

    /// A line of three regions 10 m apart: a — b — c (a is the entrance).
    static let line = """
        site: line-test
        gateways:
          - { id: gw-a, position: [0, 0] }
          - { id: gw-b, position: [10, 0] }
          - { id: gw-c, position: [20, 0] }
        regions:
          - { id: a, gateways: [gw-a], radius_m: 3, entrance: true }
          - { id: b, gateways: [gw-b], radius_m: 3 }
          - { id: c, gateways: [gw-c], radius_m: 3 }
        edges:
          - [a, b]
          - [b, c]
        tracking:
          ibeacon_uuids: ["F7826DA6-4FA2-4E98-8024-BC5B71E0893E"]
        """

    static func site(_ yaml: String) throws -> Site {
        try SiteLoader.parse(yaml: yaml).site
    }

    /// A device standing at `position` from `start` for `duration` seconds.
    static func standing(_ index: Int, at position: Point, start: Double, duration: Double,
                         interval: Double = 0.5, p1m: Double = -59) -> SimulatedDevice {
        SimulatedDevice(
            id: .mac([0x02, 0, 0, 0, UInt8(index >> 8), UInt8(index & 0xFF)]),
            trajectory: Trajectory(waypoints: [.init(time: start, position: position, floor: 0),
                                               .init(time: start + duration, position: position, floor: 0)]),
            isStationary: true, advertisingInterval: interval, measuredPowerDBm: p1m, advertisedPowerDBm: -59)
    }

    /// Every sighting of a scenario, in order.
    static func allSightings(_ scenario: Scenario) -> [SimulatedSighting] {
        var generator = SightingGenerator(scenario: scenario)
        var out: [SimulatedSighting] = []
        while let chunk = generator.next() { out += chunk }
        return out
    }
}
