import WaymarkCore
import WaymarkFusion

/// The devices heard since the last write and the first and last time each was heard, kept by
/// the engine's device handle: per sighting that is two array writes instead of hashing the
/// device id into a set and a dictionary (which cost more than the fusion step itself).
struct DeviceActivity: Sendable {
    private var first: [Double] = []
    private var last: [Double] = []
    private var ids: [DeviceID?] = []
    /// Handle indices heard since the last `take()`, in first-heard order.
    private var heard: [Int32] = []
    /// Devices whose handle went to another device before `take()` (the engine forgot them and
    /// reused the slot: only possible for a device none of whose readings it accepted).
    private var displaced: [(device: DeviceID, first: Double, last: Double)] = []

    var isEmpty: Bool { heard.isEmpty && displaced.isEmpty }

    mutating func note(_ handle: DeviceHandle, _ device: DeviceID, first f: Double, last l: Double) {
        let i = Int(handle.index)
        if i >= ids.count {
            let grow = i + 1 - ids.count
            first.append(contentsOf: repeatElement(.infinity, count: grow))
            last.append(contentsOf: repeatElement(-.infinity, count: grow))
            ids.append(contentsOf: repeatElement(nil, count: grow))
        }
        if let other = ids[i], other != device {
            displaced.append((other, first[i], last[i]))
            first[i] = .infinity
            last[i] = -.infinity
            ids[i] = device
        } else if ids[i] == nil {
            ids[i] = device
            heard.append(handle.index)
        }
        first[i] = min(first[i], f)
        last[i] = max(last[i], l)
    }

    /// The devices heard with their first and last sighting, and a fresh start.
    mutating func take() -> [(device: DeviceID, first: Double, last: Double)] {
        var out = displaced
        displaced.removeAll()
        out.reserveCapacity(out.count + heard.count)
        for h in heard {
            let i = Int(h)
            out.append((ids[i]!, first[i], last[i]))
            ids[i] = nil
            first[i] = .infinity
            last[i] = -.infinity
        }
        heard.removeAll(keepingCapacity: true)
        return out
    }
}
