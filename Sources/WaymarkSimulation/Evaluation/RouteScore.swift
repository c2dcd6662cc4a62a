/// How well a system's recorded visits follow a device's true route when the truth has no times —
/// the rooms in the order they were walked through, as in a recording whose only ground truth is
/// the trajectory the person followed (docs/accuracy.md, "Routes without timing").
///
/// The recorded route is the visits in order of entry (inferred ones included), consecutive repeats
/// merged — the same sequence as `Evaluator`'s path accuracy.
public struct RouteScore: Hashable, Sendable {
    /// Rooms on the true route.
    public var trueRooms: Int
    /// Rooms on the recorded route.
    public var recordedRooms: Int
    /// Levenshtein distance between the two routes (insertions, deletions, substitutions cost 1).
    public var editDistance: Int

    /// 1 − edit distance ÷ the longer route's length (1 when both are empty).
    public var accuracy: Double {
        let longer = max(trueRooms, recordedRooms)
        return longer == 0 ? 1 : 1 - Double(editDistance) / Double(longer)
    }

    public init(trueRoute: [Int], visits: [ScoredVisit]) {
        let recorded = Evaluator.sequence(visits)
        var merged: [Int] = []
        for r in trueRoute where merged.last != r { merged.append(r) }
        trueRooms = merged.count
        recordedRooms = recorded.count
        editDistance = Evaluator.editDistance(merged, recorded)
    }
}
