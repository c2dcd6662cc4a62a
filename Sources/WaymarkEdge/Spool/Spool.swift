import Foundation

/// The durable store-and-forward buffer of batches (DESIGN.md §2, §6).
///
/// Every batch is appended (and, with ``Configuration/fsync``, flushed to the device) before it is
/// published, and stays until the aggregator's ack covers it. Records live in segment files
/// (`seg-<number>.wms`) of framed records (``SpoolFrame``); a segment is deleted once all its
/// records are acked or dropped. When the spool exceeds ``Configuration/maxBytes`` whole oldest
/// segments are dropped and every unacked batch in them is counted in ``dropped``. At start the
/// directory is read back: intact records are re-queued for sending, damaged stretches (torn
/// writes) are skipped and counted, and new records go to a fresh segment.
///
/// Not thread-safe: one owner (the agent, under its lock).
public final class Spool {
    public struct Configuration: Sendable, Equatable {
        public var directory: String
        /// Upper bound on the spool's size on disk; exceeded by at most one segment.
        public var maxBytes: Int
        /// Records per segment file: smaller segments free space and drop more finely.
        public var segmentBatches: Int
        /// `fdatasync` after each append (survives a power cut; costs a flash write per batch).
        public var fsync: Bool

        public init(directory: String, maxBytes: Int = 64 << 20, segmentBatches: Int = 60, fsync: Bool = true) {
            self.directory = directory
            self.maxBytes = maxBytes
            self.segmentBatches = max(1, segmentBatches)
            self.fsync = fsync
        }
    }

    /// One spooled batch.
    public struct Entry: Sendable, Equatable {
        public var boot: String
        public var seq: UInt64
        var segment: Int
        var offset: Int
        var length: Int
        /// When it was last handed to the publisher (nil: never, in this process).
        public var sentAt: Double?
        /// The payload while it has not been sent yet (saves a read on the hot path).
        var payload: [UInt8]?
    }

    struct Segment {
        var bytes: Int
        var live: Int
        var records: Int
    }

    public let configuration: Configuration
    public internal(set) var entries: [Entry] = []
    var segments: [Int: Segment] = [:]
    var current: (number: Int, fd: Int32)?
    var nextSegment = 1
    /// Batches dropped because the spool was full, since start.
    public internal(set) var dropped = 0
    /// Damaged stretches skipped while reading the spool back at start.
    public internal(set) var damagedRegions = 0
    /// Intact batches found at start (re-queued for sending).
    public internal(set) var recovered = 0
    /// Highest acked seq per boot that still has records on disk (persisted in `acked.json`, so
    /// acked records in a partly acked segment are not re-sent after a restart).
    var ackedUpTo: [String: UInt64] = [:]

    /// Opens (creating when needed) the spool directory and reads back what it holds.
    public init(_ configuration: Configuration) throws(SpoolError) {
        self.configuration = configuration
        let dir = configuration.directory
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        } catch {
            throw SpoolError.system("create directory", dir, (error as NSError).code == 513 ? EACCES : errno)
        }
        guard access(dir, W_OK) == 0 else { throw SpoolError.system("write to directory", dir) }
        try recover()
    }

    deinit { closeCurrent() }

    /// Unacknowledged batches held.
    public var depth: Int { entries.count }
    /// Bytes on disk.
    public var totalBytes: Int { segments.values.reduce(0) { $0 + $1.bytes } }

    func path(_ number: Int) -> String {
        configuration.directory + "/seg-" + String(number).leftPadded(to: 12) + ".wms"
    }

    /// Appends one batch payload (write-before-publish). Drops oldest segments when over the cap.
    public func append(_ payload: [UInt8], boot: String, seq: UInt64) throws(SpoolError) {
        if let c = current, let s = segments[c.number], s.records >= configuration.segmentBatches { closeCurrent() }
        if current == nil { try openSegment() }
        let c = current!
        let frame = SpoolFrame.encode(payload)
        let offset = segments[c.number]!.bytes
        var written = 0
        while written < frame.count {
            let n = frame.withUnsafeBytes { write(c.fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                let error = SpoolError.system("write", path(c.number))
                // Cut the partial record so the segment stays clean for the next append.
                _ = ftruncate(c.fd, off_t(offset))
                _ = lseek(c.fd, off_t(offset), SEEK_SET)
                throw error
            }
            written += n
        }
        if configuration.fsync, fdatasync(c.fd) != 0 { throw SpoolError.system("fdatasync", path(c.number)) }
        segments[c.number]!.bytes += frame.count
        segments[c.number]!.live += 1
        segments[c.number]!.records += 1
        entries.append(Entry(boot: boot, seq: seq, segment: c.number, offset: offset + SpoolFrame.headerSize,
                             length: payload.count, sentAt: nil, payload: payload))
        enforceCap()
    }

    /// Removes every batch of `boot` with a sequence number ≤ `seq`; returns how many.
    @discardableResult
    public func acknowledge(boot: String, seq: UInt64) -> Int {
        var removed = 0
        entries.removeAll { e in
            guard e.boot == boot, e.seq <= seq else { return false }
            segments[e.segment]?.live -= 1
            removed += 1
            return true
        }
        if removed > 0 {
            ackedUpTo[boot] = max(ackedUpTo[boot] ?? 0, seq)
            deleteEmptySegments()
            saveAcks()
        }
        return removed
    }

    /// The batches to (re)send now, oldest first: never sent, or sent more than `resendAfter`
    /// seconds ago. They are marked sent at `now`; call ``markUnsent(boot:seq:)`` when the
    /// publish fails.
    public func takeDue(now: Double, resendAfter: Double, limit: Int) -> [Entry] {
        var out: [Entry] = []
        for i in entries.indices where out.count < limit {
            if let sent = entries[i].sentAt, now - sent < resendAfter { continue }
            out.append(entries[i])
            entries[i].sentAt = now
            entries[i].payload = nil
        }
        return out
    }

    /// The aggregator asked for the batches of `boot` in `range` again (it holds later ones behind
    /// a gap): they become due now, ahead of their resend timer. Returns how many are spooled.
    @discardableResult
    public func markDue(boot: String, range: Range<UInt64>) -> Int {
        var n = 0
        for i in entries.indices where entries[i].boot == boot && range.contains(entries[i].seq) && entries[i].sentAt != nil {
            entries[i].sentAt = nil
            n += 1
        }
        return n
    }

    public func markUnsent(boot: String, seq: UInt64) {
        if let i = entries.firstIndex(where: { $0.boot == boot && $0.seq == seq }) { entries[i].sentAt = nil }
    }

    /// The payload of `entry` (from memory when it was just appended, else read from its segment).
    public func payload(of entry: Entry) throws(SpoolError) -> [UInt8] {
        if let p = entry.payload { return p }
        let file = path(entry.segment)
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SpoolError.system("open", file) }
        defer { Glibc.close(fd) }
        var out = [UInt8](repeating: 0, count: entry.length)
        var done = 0
        while done < entry.length {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, entry.length - done, off_t(entry.offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw SpoolError.system("read", file, n == 0 ? EIO : errno) }
            done += n
        }
        return out
    }

    /// Closes the segment being written (at shutdown). Appends reopen a new one.
    public func close() { closeCurrent() }

    func closeCurrent() {
        if let c = current { Glibc.close(c.fd) }
        current = nil
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
