import Foundation
import WaymarkAdvertising
import WaymarkCore

/// Hex with spaces allowed → bytes; traps on a typo in a test literal.
func bytes(_ hex: String) -> [UInt8] {
    guard let b = Hex.decode(hex) else { fatalError("bad hex literal in test: \(hex)") }
    return b
}

/// The shared data folder, found relative to this file: <package>/../shared/data.
let sharedData = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("shared/data")

/// Wraps AD bytes into a one-report legacy H4 event.
func legacyEvent(
    ad: [UInt8], eventType: UInt8 = 0, addressType: UInt8 = 0,
    address: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66], rssi: Int8 = -60
) -> [UInt8] {
    let report = [eventType, addressType] + address + [UInt8(ad.count)] + ad + [UInt8(bitPattern: rssi)]
    return [0x04, 0x3E, UInt8(report.count + 2), 0x02, 0x01] + report
}

/// Wraps AD bytes into a one-report extended H4 event.
func extendedEvent(
    ad: [UInt8], eventType: UInt16 = 0x0013, addressType: UInt8 = 1,
    address: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0xC6], rssi: Int8 = -70, tx: Int8 = 127,
    dataLength: UInt8? = nil
) -> [UInt8] {
    var report: [UInt8] = [UInt8(eventType & 0xFF), UInt8(eventType >> 8), addressType] + address
    report += [0x01, 0x00, 0xFF, UInt8(bitPattern: tx), UInt8(bitPattern: rssi), 0x00, 0x00, 0x00]
    report += [0, 0, 0, 0, 0, 0]
    report += [dataLength ?? UInt8(ad.count)] + ad
    return [0x04, 0x3E, UInt8(report.count + 2), 0x0D, 0x01] + report
}

/// Parses JSON text with Foundation, for checking rendered output.
func parseJSON(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    guard let dict = object as? [String: Any] else { throw CocoaError(.propertyListReadCorrupt) }
    return dict
}
