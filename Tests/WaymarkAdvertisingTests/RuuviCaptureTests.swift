import Foundation
import Testing
import WaymarkAdvertising

/// All 814 events of the ruuvitag-sensor hcidump captures decode and agree with the reference
/// decoding shipped beside them (../shared/data/ruuvitag-sensor-hcidump/*.decoded.jsonl).
@Suite struct RuuviCaptureTests {
    static let folder = sharedData.appendingPathComponent("ruuvitag-sensor-hcidump")

    @Test(arguments: [("hcidump-2.x", 511), ("hcidump-3.x", 303)])
    func captureMatchesReference(name: String, expectedCount: Int) throws {
        let capture = try String(contentsOf: Self.folder.appendingPathComponent("\(name).txt"), encoding: .utf8)
        let reference = try String(contentsOf: Self.folder.appendingPathComponent("\(name).decoded.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { try parseJSON(String($0)) }
        let packets = HCIDumpCapture.packets(in: capture)
        #expect(packets.count == expectedCount)
        #expect(reference.count == expectedCount)
        for (packet, ref) in zip(packets, reference) {
            let index = ref["index"] as! Int
            let packetBytes = try #require(packet.bytes, "event \(index) is not hex")
            #expect(packetBytes == bytes(ref["hex"] as! String), "event \(index): capture text differs from reference hex")
            let reports = try HCIEventDecoder.decode(packetBytes)
            let refReports = ref["reports"] as! [[String: Any]]
            #expect(reports.count == refReports.count, "event \(index)")
            for (report, r) in zip(reports, refReports) {
                try compare(report, r, index: index)
            }
        }
    }

    func compare(_ report: AdvertisingReport, _ r: [String: Any], index: Int) throws {
        let ctx: Comment = "event \(index)"
        #expect(report.format == .legacy, ctx)
        #expect(Int(report.eventType) == r["event_type"] as? Int, ctx)
        #expect(Int(report.address.type.rawValue) == r["address_type"] as? Int, ctx)
        #expect(report.address.description == (r["address"] as! String).lowercased(), ctx)
        #expect(report.rssi.map(Int.init) == r["rssi"] as? Int, ctx)
        #expect(report.data == bytes(r["data_hex"] as! String), ctx)
        let ad = try #require(report.ad, "event \(index): \(String(describing: report.adError))")
        let refAD = r["ad"] as! [String: Any]
        #expect(ad.localName == refAD["local_name"] as? String, ctx)
        #expect(ad.txPowerLevel.map(Int.init) == refAD["tx_power"] as? Int, ctx)
        #expect(ad.serviceUUIDs.map(\.description) == refAD["service_uuids"] as! [String], ctx)
        var serviceData: [String: String] = [:]
        for d in ad.serviceData { serviceData[d.uuid.description] = hex(d.data) }
        #expect(serviceData == refAD["service_data"] as! [String: String], ctx)
        var manufacturer: [String: String] = [:]
        for m in ad.manufacturerData { manufacturer[String(m.companyID)] = hex(m.data) }
        #expect(manufacturer == refAD["manufacturer_data"] as! [String: String], ctx)
    }

    func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    @Test func captureContentsAreVaried() throws {
        // Guards the comparison above against passing vacuously: the captures contain names,
        // service UUIDs and data, tx power, both public and random addresses and several PDU types.
        let capture = try String(contentsOf: Self.folder.appendingPathComponent("hcidump-3.x.txt"), encoding: .utf8)
            + String(contentsOf: Self.folder.appendingPathComponent("hcidump-2.x.txt"), encoding: .utf8)
        let reports = try HCIDumpCapture.packets(in: capture).flatMap { try HCIEventDecoder.decode($0.bytes!) }
        #expect(reports.count == 814)
        #expect(reports.contains { $0.ad?.localName == "Ruuvi 17AA" })
        #expect(reports.contains { !($0.ad?.serviceData.isEmpty ?? true) })
        #expect(reports.contains { $0.ad?.txPowerLevel == 12 })
        #expect(Set(reports.map(\.eventType)) == [0, 2, 3, 4])
        #expect(Set(reports.map(\.address.type)) == [.public, .random])
        // Ruuvi (0x0499) data format 5 adverts are there and keep their company id.
        #expect(reports.contains { $0.ad?.manufacturerData.first?.companyID == 0x0499 })
    }
}
