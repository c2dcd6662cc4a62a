/// The on-disk framing of spool records, so that a torn write (power cut mid-append) or a
/// corrupted sector is detected and skipped without losing the records around it.
///
/// Each record: magic `WMS1` (4 bytes) · payload length (u32 little-endian) · CRC-32 of the
/// payload (u32 LE) · payload. A reader that finds a bad magic, an impossible length or a wrong
/// checksum skips forward to the next magic and carries on.
enum SpoolFrame {
    static let magic: [UInt8] = Array("WMS1".utf8)
    static let headerSize = 12
    /// Larger lengths are corruption (a batch is a few KiB).
    static let maxPayload = 16 << 20

    /// Header + payload, ready to append.
    static func encode(_ payload: [UInt8]) -> [UInt8] {
        var out = magic
        out.reserveCapacity(headerSize + payload.count)
        appendLE(UInt32(payload.count), to: &out)
        appendLE(CRC32.checksum(payload), to: &out)
        out += payload
        return out
    }

    /// Result of reading a segment.
    struct Scan: Equatable {
        /// Byte ranges of intact payloads, in file order.
        var payloads: [Range<Int>] = []
        /// Damaged stretches skipped (each counts once however long it is).
        var damagedRegions = 0
        var skippedBytes = 0
    }

    static func scan(_ data: UnsafeRawBufferPointer) -> Scan {
        var scan = Scan()
        let n = data.count
        var pos = 0
        var damagedSince: Int?
        while pos < n {
            if n - pos >= headerSize, matchesMagic(data, at: pos) {
                let length = Int(readLE(data, at: pos + 4))
                let crc = readLE(data, at: pos + 8)
                let start = pos + headerSize
                if length <= maxPayload, length <= n - start,
                   CRC32.checksum(UnsafeRawBufferPointer(rebasing: data[start..<(start + length)])) == crc {
                    if let since = damagedSince {
                        scan.damagedRegions += 1
                        scan.skippedBytes += pos - since
                        damagedSince = nil
                    }
                    scan.payloads.append(start..<(start + length))
                    pos = start + length
                    continue
                }
            }
            if damagedSince == nil { damagedSince = pos }
            pos += 1
        }
        if let since = damagedSince {
            scan.damagedRegions += 1
            scan.skippedBytes += n - since
        }
        return scan
    }

    private static func matchesMagic(_ data: UnsafeRawBufferPointer, at p: Int) -> Bool {
        data[p] == magic[0] && data[p + 1] == magic[1] && data[p + 2] == magic[2] && data[p + 3] == magic[3]
    }

    static func appendLE(_ v: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    static func readLE(_ data: UnsafeRawBufferPointer, at p: Int) -> UInt32 {
        UInt32(data[p]) | UInt32(data[p + 1]) << 8 | UInt32(data[p + 2]) << 16 | UInt32(data[p + 3]) << 24
    }
}
