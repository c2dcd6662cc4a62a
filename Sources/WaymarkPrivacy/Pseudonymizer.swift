import Crypto
public import WaymarkCore

/// Replaces a Bluetooth address by a keyed hash before anything leaves the gateway (DESIGN.md §3).
///
/// The day key is HMAC-SHA256(site secret, `YYYY-MM-DD` of the UTC day); the pseudonym is the
/// first 8 bytes of HMAC-SHA256(day key, address bytes MSB first), as `anon:<16 hex digits>`. The
/// same device gets the same pseudonym all day at every gateway of the site (so the aggregator can
/// fuse it) and an unlinkable one the next day. Without the secret the address cannot be
/// recovered or tested for.
public struct Pseudonymizer: Sendable {
    private let secret: [UInt8]
    private var day: Int = .min
    private var dayKey: [UInt8] = []
    /// Address (48-bit value) → pseudonym, for the current day only.
    private var cache: [UInt64: DeviceID] = [:]
    /// The cache is cleared when it grows past this (random addresses rotate; keep memory bounded).
    public var cacheLimit = 10_000

    public init(secret: String) { self.secret = Array(secret.utf8) }

    /// The pseudonym of `address` (48-bit value, as in `BluetoothAddress.value`) at Unix time `time`.
    public mutating func pseudonym(address: UInt64, time: Double) -> DeviceID {
        rollDay(time)
        if let known = cache[address] { return known }
        if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
        let bytes = (0..<6).map { UInt8(truncatingIfNeeded: address >> UInt64(8 * (5 - $0))) }
        let id = DeviceID.anonymous(hash: Self.hmacSHA256(key: dayKey, message: bytes).prefix(8))
        cache[address] = id
        return id
    }

    /// The pseudonym of an identifier that is not a Bluetooth address (an ESPresense fingerprint id
    /// such as `irk:…`, as UTF-8 bytes) at Unix time `time`: the same construction over those
    /// bytes. Not cached; a bridge calls it once per identifier and window at most.
    public mutating func pseudonym(identifier: [UInt8], time: Double) -> DeviceID {
        rollDay(time)
        return DeviceID.anonymous(hash: Self.hmacSHA256(key: dayKey, message: identifier).prefix(8))
    }

    /// Derives the day key when `time` falls on another UTC day than the last call.
    private mutating func rollDay(_ time: Double) {
        let today = Int((time / 86_400).rounded(.down))
        guard today != day else { return }
        day = today
        dayKey = Self.hmacSHA256(key: secret, message: Array(Self.dayString(today).utf8))
        cache.removeAll(keepingCapacity: true)
    }

    /// HMAC-SHA256 (RFC 2104) of `message` under `key` (swift-crypto): the one keyed hash behind
    /// every pseudonym.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// `YYYY-MM-DD` for a day number since 1970-01-01 (proleptic Gregorian, UTC).
    static func dayString(_ days: Int) -> String {
        // Civil-from-days (H. Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))"
    }
}
