import WaymarkCore
import WaymarkJSON

/// The fields of the aggregator's retained `…/devices/<device>/state` (docs/aggregator.md) that
/// the Home Assistant output uses.
public struct AggregatorDeviceState: Sendable, Equatable {
    /// The live region, nil outside every region.
    public var currentRegion: String?
    public var confidence: Double?
    public var recordedRegion: String?
    /// Per monitored region: proximity and distance.
    public var regions: [String: (proximity: String?, distanceM: Double?)]
    public var updatedAt: Double?

    public static func == (a: Self, b: Self) -> Bool {
        a.currentRegion == b.currentRegion && a.confidence == b.confidence && a.recordedRegion == b.recordedRegion
            && a.updatedAt == b.updatedAt && a.regions.count == b.regions.count
            && a.regions.allSatisfy { k, v in b.regions[k].map { $0.proximity == v.proximity && $0.distanceM == v.distanceM } ?? false }
    }

    /// Parses the payload; a message that is not that object is an error saying what is missing.
    public static func parse(_ payload: [UInt8]) throws(JSONError) -> AggregatorDeviceState {
        let result: Result<AggregatorDeviceState, JSONError> = payload.withUnsafeBufferPointer { bytes in
            do throws(JSONError) {
                let index = try JSONObjectIndex(bytes)
                guard index.raw("current_region") != nil else {
                    throw JSONError(.syntax, "device state without 'current_region'", offset: 0)
                }
                var state = AggregatorDeviceState(currentRegion: index.string("current_region"), confidence: index.number("confidence"),
                                                  recordedRegion: index.string("recorded_region"), regions: [:],
                                                  updatedAt: index.number("updated_at"))
                if let list = index.raw("regions") {
                    var reader = JSONReader(list)
                    var array = try reader.openArray()
                    while try reader.next(in: &array) {
                        reader.skipWhitespace()
                        let start = reader.position
                        try reader.skipValue()
                        let item = try JSONObjectIndex(UnsafeBufferPointer(rebasing: list[start..<reader.position]))
                        if let id = item.string("region") {
                            state.regions[id] = (item.string("proximity"), item.number("distance_m"))
                        }
                    }
                }
                return .success(state)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
