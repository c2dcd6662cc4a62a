import WaymarkCore
import WaymarkFusion

extension WriteBatch {
    /// Appends a later write to this one, so that the writer can commit several queued writes in
    /// one transaction when PostgreSQL falls behind: rows are concatenated, counters added, and
    /// only the latest checkpoint per device and the highest mark per gateway boot are kept —
    /// which makes a slow database cheaper to catch up with, not more expensive.
    public mutating func absorb(_ later: WriteBatch) {
        visits += later.visits
        journeys += later.journeys
        transitions += later.transitions
        events += later.events
        notifications += later.notifications
        if !later.notifierStates.isEmpty {
            var latest: [DeviceID: Int] = [:]
            for (i, s) in notifierStates.enumerated() { latest[s.device] = i }
            for s in later.notifierStates {
                if let i = latest[s.device] { notifierStates[i] = s } else {
                    latest[s.device] = notifierStates.count
                    notifierStates.append(s)
                }
            }
        }
        for (device, seen) in later.devices {
            if let mine = devices[device] {
                devices[device] = (min(mine.first, seen.first), max(mine.last, seen.last))
            } else {
                devices[device] = seen
            }
        }
        for (key, seen) in later.entranceHeard {
            if let mine = entranceHeard[key] {
                entranceHeard[key] = (min(mine.first, seen.first), max(mine.last, seen.last))
            } else {
                entranceHeard[key] = seen
            }
        }
        statuses += later.statuses
        for (key, i) in later.ingest {
            var mine = ingest[key] ?? Ingest()
            mine.batches += i.batches
            mine.sightings += i.sightings
            mine.clockCorrected += i.clockCorrected
            mine.lastBatchAt = max(mine.lastBatchAt, i.lastBatchAt)
            mine.maxOffsetS = max(mine.maxOffsetS, i.maxOffsetS)
            ingest[key] = mine
        }
        for (key, n) in later.rejections { rejections[key, default: 0] += n }
        rawSightings += later.rawSightings
        rawSources += later.rawSources
        if !later.forgottenDevices.isEmpty {
            // Forgotten after this write's checkpoint: the deletion stands, the checkpoint goes.
            let gone = Set(later.forgottenDevices)
            checkpoints.removeAll { gone.contains($0.device) }
            forgottenDevices += later.forgottenDevices
        }
        if !later.checkpoints.isEmpty {
            var latest: [DeviceID: Int] = [:]
            for (i, cp) in checkpoints.enumerated() { latest[cp.device] = i }
            for cp in later.checkpoints {
                if let i = latest[cp.device] { checkpoints[i] = cp } else {
                    latest[cp.device] = checkpoints.count
                    checkpoints.append(cp)
                }
            }
        }
        aggregatorState = later.aggregatorState
        for (key, seq) in later.progress { progress[key] = max(progress[key] ?? 0, seq) }
        sightingCount += later.sightingCount
    }
}
