import Foundation
import WaymarkCore

/// The edge's outgoing streams of batches: one lane per shard of the site's `ShardLayout`
/// (`publish.shards`), each with its own spool, sequence numbers, sightings topic and ack topic,
/// because each shard's batches are committed and acked by the aggregator that owns the shard.
/// Unsharded (the default) there is one lane: the spool is `spool.dir` itself, the topics are
/// `…/sightings` and `…/ack`, and the batches keep the pipeline's sequence numbers — exactly the
/// edge without shards.
///
/// Not thread-safe: one owner (the agent, under its lock).
struct PublishLanes {
    struct Lane {
        /// The shard, nil unsharded (no shard level in the topics).
        let shard: Int?
        let spool: Spool
        let sightingsTopic: String
        let ackTopic: String
        /// The sequence number of this lane's next batch (sharded lanes number their own).
        var nextSeq: UInt64 = 1
    }

    let layout: ShardLayout
    private(set) var lanes: [Lane]

    /// Name of the file in `spool.dir` that records the shard count its spools were written with.
    static let layoutFile = "shards"

    /// Opens (creating when needed) one spool per shard: `spool.dir` unsharded, `spool.dir/shard-K`
    /// with shards; `spool.max_bytes` is shared equally. Refuses to start when the spools of
    /// another shard count still hold unacknowledged batches: they were numbered and addressed
    /// for that layout and would be lost or misrouted under this one.
    init(layout: ShardLayout, spool base: Spool.Configuration, topics: Topics, gateway: String) throws(SpoolError) {
        self.layout = layout
        let stored = Self.storedCount(in: base.directory)
        if stored != layout.count, let old = ShardLayout(count: stored) {
            for dir in Self.directories(of: old, in: base.directory) where FileManager.default.fileExists(atPath: dir) {
                var c = base
                c.directory = dir
                let spool = try Spool(c)
                let held = spool.depth
                spool.close()
                guard held == 0 else {
                    throw SpoolError.layout(
                        "\(base.directory) holds \(held) unacknowledged batches written with publish.shards \(old.count), now \(layout.count): start once with publish.shards \(old.count) until the spool is empty (spool_depth 0), or move the directory away (its batches are then not delivered)")
                }
            }
        }
        var lanes: [Lane] = []
        let dirs = Self.directories(of: layout, in: base.directory)
        for (k, dir) in dirs.enumerated() {
            var c = base
            c.directory = dir
            c.maxBytes = max(4096, base.maxBytes / layout.count)
            let shard: Int? = layout.isSharded ? k : nil
            lanes.append(Lane(shard: shard, spool: try Spool(c), sightingsTopic: topics.sightings(gateway, shard: shard),
                              ackTopic: topics.ack(gateway, shard: shard)))
        }
        self.lanes = lanes
        try Self.storeCount(layout.count, in: base.directory)
    }

    static func directories(of layout: ShardLayout, in base: String) -> [String] {
        layout.isSharded ? (0..<layout.count).map { base + "/shard-\($0)" } : [base]
    }

    /// The shard count recorded in `dir` (1 when none is: the spool of an unsharded edge).
    static func storedCount(in dir: String) -> Int {
        guard let data = FileManager.default.contents(atPath: dir + "/" + layoutFile),
              let text = String(data: data, encoding: .utf8),
              let n = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return 1 }
        return n
    }

    /// Records the shard count in `dir`. Unrecorded, a later start with another count would not
    /// look for this layout's unacknowledged batches: the edge refuses to start instead.
    static func storeCount(_ n: Int, in dir: String) throws(SpoolError) {
        let path = dir + "/" + layoutFile
        if n == 1 {
            try? FileManager.default.removeItem(atPath: path)
        } else if !FileManager.default.createFile(atPath: path, contents: Data("\(n)\n".utf8)) {
            throw SpoolError.system("write", path)
        }
    }

    /// The window's batch as each lane sends it: the batch itself unsharded; with shards one batch
    /// per shard (empty ones too, so that every aggregator hears from every gateway each window),
    /// numbered in its lane. Returns (lane index, batch) pairs.
    mutating func route(_ batch: SightingBatch) -> [(lane: Int, batch: SightingBatch)] {
        guard layout.isSharded else { return [(0, batch)] }
        var out: [(lane: Int, batch: SightingBatch)] = []
        out.reserveCapacity(lanes.count)
        for (k, var part) in layout.split(batch).enumerated() {
            part.seq = lanes[k].nextSeq
            lanes[k].nextSeq += 1
            out.append((k, part))
        }
        return out
    }

    /// The lane whose acks arrive on `topic`.
    func lane(forAckTopic topic: String) -> Int? { lanes.firstIndex { $0.ackTopic == topic } }

    var depth: Int { lanes.reduce(0) { $0 + $1.spool.depth } }
    var dropped: Int { lanes.reduce(0) { $0 + $1.spool.dropped } }
    var totalBytes: Int { lanes.reduce(0) { $0 + $1.spool.totalBytes } }
    var damagedRegions: Int { lanes.reduce(0) { $0 + $1.spool.damagedRegions } }
    var recovered: Int { lanes.reduce(0) { $0 + $1.spool.recovered } }
    /// Every spooled batch has been handed to the publisher at least once.
    var allSent: Bool { lanes.allSatisfy { $0.spool.entries.allSatisfy { $0.sentAt != nil } } }

    func close() { for lane in lanes { lane.spool.close() } }
}
