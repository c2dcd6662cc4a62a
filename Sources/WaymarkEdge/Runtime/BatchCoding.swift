import Foundation
import WaymarkCore

/// The JSON of a ``SightingBatch`` on the wire and in the spool.
enum BatchCoding {
    static func encode(_ batch: SightingBatch) -> [UInt8] {
        // Encoding a value of our own Codable type cannot fail (all numbers are finite).
        (try? Array(JSONEncoder().encode(batch))) ?? []
    }
}
