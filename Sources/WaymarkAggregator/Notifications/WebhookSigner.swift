import Crypto
import Foundation

/// The signature of a webhook request: `X-Waymark-Signature: sha256=<hex>`, the HMAC-SHA256 of
/// `<X-Waymark-Timestamp>.<body>` under the rule's secret. A receiver recomputes it over the raw
/// body it received, compares in constant time, and rejects old timestamps (replays).
public enum WebhookSigner {
    public static let signatureHeader = "X-Waymark-Signature"
    public static let timestampHeader = "X-Waymark-Timestamp"
    public static let idHeader = "X-Waymark-Id"
    public static let attemptHeader = "X-Waymark-Attempt"

    /// `sha256=` and the lower-case hex HMAC-SHA256 of `timestamp`, `.`, `body`.
    public static func signature(secret: String, timestamp: String, body: [UInt8]) -> String {
        var mac = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        mac.update(data: Array(timestamp.utf8))
        mac.update(data: [UInt8(ascii: ".")])
        mac.update(data: body)
        return "sha256=" + mac.finalize().map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
