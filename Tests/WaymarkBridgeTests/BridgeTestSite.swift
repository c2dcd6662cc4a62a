import WaymarkConfig
import WaymarkCore

/// A small site with two ESPresense rooms and one Theengs gateway, tracking one iBeacon UUID and
/// one MAC address.
enum BridgeTestSite {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let mac = "c4:7c:8d:6a:12:34"

    static func yaml(pseudonymous: Bool = false) -> String {
        """
        site: home
        gateways:
          - { id: gw-kitchen, position: [0, 0] }
          - { id: gw-office, position: [6, 0] }
          - { id: gw-garage, position: [12, 0] }
        regions:
          - { id: kitchen, name: Kitchen, gateways: [gw-kitchen] }
          - { id: office, name: Office, gateways: [gw-office] }
          - { id: garage, name: Garage, gateways: [gw-garage] }
        edges: [[kitchen, office], [office, garage]]
        tracking:
          ibeacon_uuids: ["\(uuid)"]
          macs: ["\(mac)"]
        \(pseudonymous ? "  pseudonymous: true\n  pseudonym_secret: \"0123456789abcdef-secret\"" : "")
        foreign_gateways:
          - { gateway: gw-kitchen, espresense: kitchen }
          - { gateway: gw-office, espresense: office }
          - { gateway: gw-garage, theengs: home/TheengsGateway/BTtoMQTT }
        """
    }

    static func site(pseudonymous: Bool = false) throws -> Site {
        try SiteLoader.parse(yaml: yaml(pseudonymous: pseudonymous)).site
    }

    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
}
