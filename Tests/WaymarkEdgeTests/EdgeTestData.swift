import Foundation
import WaymarkConfig
import WaymarkCore

/// Paths of the shared test data (beside the repository: ../shared/data) and a test site.
enum EdgeTestData {
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func shared(_ relative: String) -> String {
        packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data/\(relative)").path
    }

    static var capture2x: String { shared("ruuvitag-sensor-hcidump/hcidump-2.x.txt") }
    static var decoded2x: String { shared("ruuvitag-sensor-hcidump/hcidump-2.x.decoded.jsonl") }

    /// Two public addresses and one static random (Ruuvi) address of the 2.x capture.
    static let trackedMACs = ["14:BB:6E:A6:5E:51", "D0:03:DF:91:50:EB", "C5:0D:FA:99:CB:9E"]

    static func site(pseudonymous: Bool = false) throws -> Site {
        let yaml = """
        site: edge-test
        gateways:
          - id: gw1
            position: [0, 0]
        regions:
          - id: r1
            gateways: [gw1]
        tracking:
          macs: [\(trackedMACs.map { "\"\($0)\"" }.joined(separator: ", "))]
        \(pseudonymous ? "  pseudonymous: true\n  pseudonym_secret: \"edge-test-secret-0123\"" : "")
        """
        return try SiteLoader.parse(yaml: yaml).site
    }

    /// One report of the decoded capture (Bumble's reading): address MSB first, type, RSSI.
    struct Report {
        var index: Int
        var address: String
        var addressType: Int
        var rssi: Int
    }

    static func decodedReports() throws -> [Report] {
        let text = try String(contentsOfFile: decoded2x, encoding: .utf8)
        var out: [Report] = []
        for line in text.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            for r in object["reports"] as! [[String: Any]] {
                out.append(Report(index: object["index"] as! Int, address: r["address"] as! String,
                                  addressType: r["address_type"] as! Int, rssi: r["rssi"] as! Int))
            }
        }
        return out
    }

    static func mac(_ address: String) -> DeviceID {
        DeviceID.mac(DeviceID.parseMAC(address)!)
    }

    static func temporaryDirectory(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-\(name)-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }
}
