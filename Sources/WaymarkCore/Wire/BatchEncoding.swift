/// The two encodings of a ``SightingBatch`` on `…/gateways/<gw>/sightings`: JSON (the default and
/// the reference contract, DESIGN.md §4) and protocol buffers (proto/waymark_batch.proto, chosen
/// per gateway with the edge's `publish.encoding`). The aggregator accepts both on the same topic.
public enum BatchEncoding: String, Sendable, CaseIterable, Codable {
    case json
    case protobuf

    /// The encoding a received payload is in: JSON when its first byte is `{` or JSON whitespace
    /// (space, tab, line feed, carriage return), protobuf otherwise. The .proto's field numbers
    /// and types make sure a serialised batch never starts with one of those bytes, so a payload of
    /// either encoding is never taken for the other (a damaged one is rejected by the decoder of
    /// the encoding it looks like). An empty payload counts as (broken) JSON: no batch of either
    /// encoding is empty, since a protobuf batch always carries its `sighting_count`.
    public static func of(_ payload: [UInt8]) -> BatchEncoding {
        guard let first = payload.first else { return .json }
        return startsJSON(first) ? .json : .protobuf
    }

    /// True for the bytes a JSON text may start with before its `{`: `{` itself and whitespace.
    @inline(__always) public static func startsJSON(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "{") || byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
