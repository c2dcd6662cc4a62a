import WaymarkCore

/// The pure first step of `AggregatorCore.handle` for a sighting batch — route the topic and
/// decode the payload — split off so that it can run on other threads (`DecodeStage`) while the
/// fusion thread works on earlier messages. The core then takes the result instead of decoding
/// again; what it decides (rejections, duplicates, fusion) is the same as when it decodes itself.
public struct BatchPreparer: Sendable {
    let topics: Topics
    let site: Site
    let maxPayloadBytes: Int
    /// The site's shard layout: a sharded aggregator's check that every device of a batch belongs
    /// to its topic's shard (one hash per entry) is done here too, off the fusion thread.
    let layout: ShardLayout
    /// Each preparer keeps its own cache of validated device ids.
    var decoder = BatchDecoder()

    public init(site: Site, topics: Topics, maxPayloadBytes: Int, layout: ShardLayout = .single) {
        self.site = site
        self.topics = topics
        self.maxPayloadBytes = maxPayloadBytes
        self.layout = layout
    }

    public init(for core: AggregatorCore) {
        self.init(site: core.site, topics: core.topics, maxPayloadBytes: core.settings.maxPayloadBytes,
                  layout: core.settings.shards.layout)
    }

    /// The decoded batch, or nil for anything the core checks before decoding (other topics,
    /// oversize payloads, unknown gateways): those it handles itself, cheaply.
    public mutating func prepare(topic: String, payload: [UInt8]) -> PreparedBatch? {
        guard let (gateway, kind, shard) = topics.gatewayTopic(topic), kind == "sightings",
              payload.count <= maxPayloadBytes, site.gatewayIndex(gateway) != nil else { return nil }
        do {
            let batch = try decoder.decode(payload)
            return PreparedBatch(result: .success(batch), inTopicShard: layout.holdsOnly(batch, shard: shard ?? 0))
        } catch {
            return PreparedBatch(result: .failure(error))
        }
    }
}

/// A batch payload decoded ahead of the fusion thread (or the reason it could not be).
public struct PreparedBatch: Sendable {
    let result: Result<SightingBatch, BatchDecoder.Failure>
    /// Whether every device of the batch is in its topic's shard (`BatchPreparer.layout`); nil
    /// when not checked.
    var inTopicShard: Bool? = nil
}
