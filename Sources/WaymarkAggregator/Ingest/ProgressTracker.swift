/// High-water marks per (gateway, boot, shard): the highest batch sequence number processed, and the
/// highest committed to PostgreSQL. A batch at or below the processed mark is a duplicate
/// (re-delivery by the broker or a resend from the gateway's spool).
///
/// Sequence numbers only grow within a boot and the edge resends its spool in order, so one
/// number per boot is enough; a batch that arrives after a later one of the same boot counts as
/// a duplicate too (it cannot be told from one).
public struct ProgressTracker: Sendable {
    public struct Key: Hashable, Sendable, Comparable {
        public var gateway: String
        public var boot: String
        /// The shard of a sharded layout (each shard of a boot numbers its batches); 0 unsharded.
        public var shard: Int
        public init(gateway: String, boot: String, shard: Int = 0) {
            self.gateway = gateway
            self.boot = boot
            self.shard = shard
        }

        public static func < (a: Key, b: Key) -> Bool { (a.gateway, a.boot, a.shard) < (b.gateway, b.boot, b.shard) }
    }

    public private(set) var processed: [Key: UInt64] = [:]
    public private(set) var committed: [Key: UInt64] = [:]
    /// The highest sequence number taken in (processed, or held for event-time ordering).
    public private(set) var received: [Key: UInt64] = [:]
    /// Batches skipped over by gaps that never filled (lost at the gateway; `skip(_:to:)`).
    public private(set) var skipped = 0
    /// Keys whose processed mark moved since the last `takeAdvanced()`.
    private var advanced: Set<Key> = []

    public init() {}

    /// Loads the committed marks (after a restart, processed = committed).
    public mutating func restore(_ marks: [Key: UInt64]) {
        committed = marks
        processed = marks
        received = marks
    }

    public func isDuplicate(_ key: Key, seq: UInt64) -> Bool {
        guard let mark = taken(key) else { return false }
        return seq <= mark
    }

    /// The highest sequence number processed or held.
    func taken(_ key: Key) -> UInt64? {
        switch (processed[key], received[key]) {
        case (let p?, let r?): max(p, r)
        case (let p, let r): p ?? r
        }
    }

    /// Records that `seq` was taken in (it may still be held before processing).
    public mutating func markReceived(_ key: Key, seq: UInt64) {
        if seq > received[key] ?? 0 || received[key] == nil { received[key] = seq }
    }

    /// The sequence number that follows what was taken in (1 for a boot not seen yet).
    public func nextExpected(_ key: Key) -> UInt64 { (taken(key) ?? 0) + 1 }

    /// Gives up on the batches before `seq` that never came (lost at the gateway): they count in
    /// `skipped`, and `seq` is the next one expected.
    public mutating func skip(_ key: Key, to seq: UInt64) {
        let expected = nextExpected(key)
        guard seq > expected else { return }
        skipped += Int(seq - expected)
        received[key] = seq - 1
    }

    /// The committed mark covering `seq`, when there is one (to re-ack a duplicate).
    public func committedMark(_ key: Key, covering seq: UInt64) -> UInt64? {
        guard let mark = committed[key], seq <= mark else { return nil }
        return mark
    }

    public mutating func markProcessed(_ key: Key, seq: UInt64) {
        if seq > processed[key] ?? 0 || processed[key] == nil {
            processed[key] = seq
            advanced.insert(key)
        }
    }

    /// The marks that moved since the last call, for the next write.
    public mutating func takeAdvanced() -> [Key: UInt64] {
        var out: [Key: UInt64] = [:]
        for k in advanced { out[k] = processed[k] }
        advanced.removeAll(keepingCapacity: true)
        return out
    }

    public mutating func markCommitted(_ marks: [Key: UInt64]) {
        for (k, v) in marks where v > committed[k] ?? 0 || committed[k] == nil { committed[k] = v }
    }
}
