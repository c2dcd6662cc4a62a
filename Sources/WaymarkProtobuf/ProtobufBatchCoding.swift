import SwiftProtobuf
import WaymarkCore

/// A ``SightingBatch`` in its protocol-buffers form (proto/waymark_batch.proto, the generated
/// `Waymark_V1_SightingBatch`): what `waymark-edge` publishes and spools with
/// `publish.encoding: protobuf`. The aggregator's `BatchDecoder` reads it back, with the same
/// checks as the JSON form; both give the same `SightingBatch`.
public enum ProtobufBatchCoding {
    /// The serialised batch. Its first byte is never `{` or JSON whitespace (see the .proto).
    public static func encode(_ batch: SightingBatch) -> [UInt8] {
        // Serialising a message whose fields all have a wire form cannot fail (no required
        // fields, no Any); a failure would be a bug in the generated code, so it stops loudly.
        do { return try message(batch).serializedBytes() } catch { preconditionFailure("protobuf batch encoding failed: \(error)") }
    }

    /// The message for `batch`, field by field.
    public static func message(_ batch: SightingBatch) -> Waymark_V1_SightingBatch {
        var m = Waymark_V1_SightingBatch()
        m.v = UInt32(clamping: batch.v)
        m.gateway = batch.gateway
        m.boot = batch.boot
        m.seq = batch.seq
        m.start = batch.start
        m.end = batch.end
        m.sightings.reserveCapacity(batch.sightings.count)
        for e in batch.sightings {
            var s = Waymark_V1_Sighting()
            s.device = e.device.rawValue
            s.count = UInt32(clamping: e.count)
            s.rssiMax = e.rssiMax
            s.rssiMean = e.rssiMean
            s.rssiLast = e.rssiLast
            if let tx = e.tx { s.tx = tx }
            s.first = e.first
            s.last = e.last
            if let t = e.telemetry {
                var telemetry = Waymark_V1_Telemetry()
                if let mv = t.batteryMV { telemetry.batteryMv = UInt32(clamping: mv) }
                if let c = t.temperatureC { telemetry.temperatureC = c }
                s.telemetry = telemetry
            }
            m.sightings.append(s)
        }
        m.sightingCount = UInt32(clamping: batch.sightings.count)
        return m
    }

    /// The (boot, seq) of a serialised batch, or nil when it is not one (the edge's spool reads
    /// them back at start to know what to resend).
    public static func key(of payload: [UInt8]) -> (boot: String, seq: UInt64)? {
        var options = BinaryDecodingOptions()
        options.discardUnknownFields = true
        guard let m = try? Waymark_V1_SightingBatch(serializedBytes: payload, options: options), m.hasSightingCount else { return nil }
        return (m.boot, m.seq)
    }
}
