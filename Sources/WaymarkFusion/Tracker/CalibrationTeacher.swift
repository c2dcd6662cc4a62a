import WaymarkCore

/// Where devices truly were, for a supervised calibration (`waymark site calibrate --truth`, a
/// walk test at installation): the self-calibration then learns from the seconds a stay covers, in
/// the region the stay names, instead of from the seconds the tracker is sure of.
///
/// Why it exists: learning a gateway's offset from the tracker's own belief confirms itself. A
/// gateway reading 8 dB hot pulls devices into its region, and measured against that region it
/// looks right; with one tag in a small venue the offset and the place are learned from the same
/// readings and cannot be told apart (docs/accuracy.md, "Gateway offsets fitted jointly with the
/// level"). A recording whose places are known breaks the loop: a tag carried to each region and
/// held there for a while, with the times written down.
///
/// Only seconds wholly inside a stay teach, and only when the stay's region is in the device's
/// monitored set; the usual gates on the device's level and the model's fit still apply, but they
/// are lenient (12 dB): a stay with the wrong region or times teaches wrong places, which is why
/// `waymark site calibrate` lists the stays in which the engine placed the tag elsewhere most of
/// the time. What the tracker decides (the live region, the recorded history) does not change,
/// except that every region of the set is evaluated (no pruning), so that the stay's region has
/// its fitted level.
public struct CalibrationTeacher: Sendable {
    /// One stay: `region` (a site region index) from `from` to `to` (Unix seconds).
    public struct Stay: Sendable, Equatable {
        public var region: Int32
        public var from: Double
        public var to: Double

        public init(region: Int32, from: Double, to: Double) {
            self.region = region
            self.from = from
            self.to = to
        }
    }

    /// Each device's stays, sorted by start.
    public let stays: [DeviceID: [Stay]]

    public init(stays: [DeviceID: [Stay]]) {
        self.stays = stays.mapValues { $0.sorted { $0.from < $1.from } }
    }

    /// How many seconds the stays cover in all (whole seconds, as they teach).
    public var seconds: Int {
        stays.values.reduce(0) { total, list in
            total + list.reduce(0) { $0 + max(0, Int($1.to.rounded(.down)) - Int($1.from.rounded(.up))) }
        }
    }

    /// The region `device` was in throughout the second starting at `second`, if a stay covers it.
    func region(of device: DeviceID, second: Int64) -> Int32? {
        guard let list = stays[device] else { return nil }
        let start = Double(second), end = start + 1
        // The last stay starting at or before the second's start.
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid].from <= start { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0, list[lo - 1].to >= end else { return nil }
        return list[lo - 1].region
    }
}
