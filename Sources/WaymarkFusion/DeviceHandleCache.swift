import WaymarkCore

/// A shortcut for `FusionEngine.handle(for:)` past hashing the device id, which it does for every
/// sighting (SipHash over some 50 bytes, about as much as the rest of taking a reading in).
///
/// The aggregator's decoder interns the ids it decodes (`BatchDecoder`'s cache), so a device's
/// sightings carry the same string storage batch after batch. This table remembers, by the address
/// of that storage, the slot the id was last found in: direct-mapped, one entry per bucket, a
/// collision simply overwrites. An entry is only a hint: the engine takes it when that slot is
/// held and holds this very id (a string compared with itself is equal at once, without reading
/// its bytes), and otherwise looks the id up as before. So a stale entry (the string freed and
/// its memory reused, the device forgotten, its slot reused) costs a lookup, never a wrong handle,
/// and nothing the engine computes depends on what the table holds.
struct DeviceHandleCache: Sendable {
    private var addresses: [UInt] = []
    private var slots: [Int32] = []
    private var shift = 64

    /// The slot last noted for the storage of `device`, if any.
    func slot(for device: DeviceID) -> Int32? {
        guard let (bucket, address) = bucket(of: device), addresses[bucket] == address else { return nil }
        return slots[bucket]
    }

    /// Notes that `device` is in `slot`; `devices` is how many slots the engine has (the table
    /// keeps at least twice as many buckets, so that collisions stay rare).
    mutating func note(_ device: DeviceID, slot: Int32, devices: Int) {
        if addresses.count < 2 * devices { resize(for: devices) }
        guard let (bucket, address) = bucket(of: device) else { return }
        addresses[bucket] = address
        slots[bucket] = slot
    }

    private mutating func resize(for devices: Int) {
        var size = 1024
        while size < 4 * devices { size <<= 1 }
        addresses = Array(repeating: 0, count: size)
        slots = Array(repeating: -1, count: size)
        shift = 64 - size.trailingZeroBitCount
    }

    /// The bucket of `device`'s storage and its address; nil for a string without storage of its
    /// own (up to 15 bytes are kept inline, so their address is a temporary one) or an empty table.
    private func bucket(of device: DeviceID) -> (Int, UInt)? {
        guard !addresses.isEmpty else { return nil }
        let utf8 = device.rawValue.utf8
        guard utf8.count > 15, let address = utf8.withContiguousStorageIfAvailable({ UInt(bitPattern: $0.baseAddress) }),
              address != 0 else { return nil }
        // Fibonacci hashing of the address (its low bits are alignment).
        let bucket = Int(truncatingIfNeeded: (UInt64(address) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
        return (bucket, address)
    }
}
