import Crypto
public import WaymarkCore

/// Notification ids: a UUID (version 8, "custom") made from the first 16 bytes of SHA-256 over
/// the site, the rule, the kind, the device and the evidence time in milliseconds. The same
/// evidence always gives the same id — in `waymark replay`, in the aggregator, and again after a
/// crash and restart — so the table's insert is idempotent on it and receivers can de-duplicate.
public enum NotificationID {
    public static func make(site: String, rule: String, kind: NotificationRule.Trigger, device: DeviceID, t: Double) -> String {
        let millis = Int64((t * 1000).rounded())
        var hasher = SHA256()
        for part in ["waymark-notification-v1", site, rule, kind.rawValue, device.rawValue, String(millis)] {
            hasher.update(data: Array(part.utf8))
            hasher.update(data: [0])
        }
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return BeaconUUID(bytes: bytes)!.description
    }
}
