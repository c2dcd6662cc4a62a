import WaymarkCore

/// Memory accounting for the benchmark and for operators sizing an aggregator.
extension FusionEngine {
    public struct MemoryStatistics: Sendable {
        /// Mean bytes per device: the inline state, its arrays by capacity (with a 32-byte header
        /// each), the id's bytes, and one entry of the device index.
        public var meanBytes: Double
        public var maxBytes: Int
        /// Mean monitored-set size.
        public var meanSlots: Double
    }

    public func memoryStatistics() -> MemoryStatistics {
        guard deviceCount > 0 else { return .init(meanBytes: 0, maxBytes: 0, meanSlots: 0) }
        let indexEntry = MemoryLayout<DeviceID>.stride + MemoryLayout<Int32>.stride + 8
        var total = 0, maxBytes = 0, slots = 0
        for (i, d) in devices.enumerated() where !vacant[i] {
            let b = d.footprintBytes + indexEntry
            total += b
            maxBytes = max(maxBytes, b)
            slots += d.slots.count
        }
        return .init(meanBytes: Double(total) / Double(deviceCount), maxBytes: maxBytes,
                     meanSlots: Double(slots) / Double(deviceCount))
    }
}
