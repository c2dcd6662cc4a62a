import WaymarkCore

/// The pure first step of `AggregatorCore.handle` for a sighting batch — route the topic and
/// decode the payload — split off so that it can run on other threads (`DecodeStage`) while the
/// fusion thread works on earlier messages. The core then takes the result instead of decoding
/// again; what it decides (rejections, duplicates, fusion) is the same as when it decodes itself.
public struct BatchPreparer: Sendable {
    let topics: Topics
    let site: Site
    let maxPayloadBytes: Int
    /// Each preparer keeps its own cache of validated device ids.
    var decoder = BatchDecoder()

    public init(site: Site, topics: Topics, maxPayloadBytes: Int) {
        self.site = site
        self.topics = topics
        self.maxPayloadBytes = maxPayloadBytes
    }

    public init(for core: AggregatorCore) {
        self.init(site: core.site, topics: core.topics, maxPayloadBytes: core.settings.maxPayloadBytes)
    }

    /// The decoded batch, or nil for anything the core checks before decoding (other topics,
    /// oversize payloads, unknown gateways): those it handles itself, cheaply.
    public mutating func prepare(topic: String, payload: [UInt8]) -> PreparedBatch? {
        guard let (gateway, kind, _) = topics.gatewayTopic(topic), kind == "sightings",
              payload.count <= maxPayloadBytes, site.gatewayIndex(gateway) != nil else { return nil }
        do { return PreparedBatch(result: .success(try decoder.decode(payload))) } catch {
            return PreparedBatch(result: .failure(error))
        }
    }
}

/// A batch payload decoded ahead of the fusion thread (or the reason it could not be).
public struct PreparedBatch: Sendable {
    let result: Result<SightingBatch, BatchDecoder.Failure>
}
