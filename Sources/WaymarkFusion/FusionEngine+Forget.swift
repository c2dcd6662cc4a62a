import HeapModule
import WaymarkCore

/// Forgetting devices (`forget_after_s`): a device that is in no region, with its journey closed
/// and nothing left for the tracker to decide, is dropped once it has not been heard for
/// `forget_after_s`, so that memory and the per-second timer scan follow the devices present, not
/// every device ever heard. It happens in `advance(to:)` at a point of the engine's own clock, so a
/// replay, a live run and a run restarted from checkpoints forget the same devices at the same time.
/// A device heard again later is a new device to the engine: its history (visits, journeys) is kept
/// by whoever stored the outputs.
///
/// The slot of a forgotten device is reused by the next new device, lowest slot first: the order
/// the engine visits devices in then depends only on which slots are taken, and an engine restored
/// from checkpoints (each restored at its `ordinal`) visits them as the uninterrupted one does.
extension FusionEngine {
    /// The id a free slot's placeholder state carries (never read: `vacant` marks the slot free).
    static let vacantID = DeviceID("mac:00-00-00-00-00-00")!

    /// Devices the engine holds state for (forgotten ones excluded).
    public var deviceCount: Int { devices.count - vacantCount }

    /// Drops device `i` when it is idle and its forget time has come by `t`, with a `.forgotten`
    /// output dated `t` (the aggregator deletes its checkpoint and clears its retained state).
    mutating func forgetIfDue(_ i: Int, at t: Double, into out: inout [FusionOutput]) {
        // Two fields first: every device a tick visits passes here, and calling a method on
        // `devices[i]` copied the whole state (every array retained and released) each time.
        let after = ctx.parameters.forgetAfterS
        guard after > 0, devices[i].current < 0, devices[i].lastTime + after <= t,
              let when = devices[i].forgetTime(ctx), when <= t else { return }
        let id = devices[i].id
        out.append(.forgotten(.init(t: t, device: id, lastHeard: devices[i].lastTime.isFinite ? devices[i].lastTime : nil)))
        deviceIndex[id] = nil
        devices[i] = DeviceState(id: Self.vacantID)
        vacant[i] = true
        freeSlots.insert(Int32(i))
        forgottenDevices += 1
        vacantCount += 1
    }

    /// A slot for a new device: the lowest free one, or a new one at the end.
    mutating func takeSlot() -> Int32 {
        if freeSlotsStale { rebuildFreeSlots() }
        if let i = freeSlots.popMin() {
            vacant[Int(i)] = false
            vacantCount -= 1
            return i
        }
        devices.append(DeviceState(id: Self.vacantID))
        vacant.append(false)
        timerTouched.append(false)
        return Int32(devices.count - 1)
    }

    /// Slot `ordinal` for `device`, restoring a checkpoint there, when it is free (slots up to it
    /// that do not exist yet are added free); nil when it is taken or out of range.
    mutating func claimSlot(_ ordinal: Int, for device: DeviceID) -> Int32? {
        guard ordinal >= 0, ordinal <= devices.count + (1 << 24) else { return nil }
        while devices.count <= ordinal {
            devices.append(DeviceState(id: Self.vacantID))
            vacant.append(true)
            timerTouched.append(false)
            vacantCount += 1
        }
        guard vacant[ordinal] else { return nil }
        vacant[ordinal] = false
        vacantCount -= 1
        freeSlotsStale = true
        deviceIndex[device] = Int32(ordinal)
        return Int32(ordinal)
    }

    mutating func rebuildFreeSlots() {
        freeSlots = Heap()
        for i in devices.indices where vacant[i] { freeSlots.insert(Int32(i)) }
        freeSlotsStale = false
    }
}
