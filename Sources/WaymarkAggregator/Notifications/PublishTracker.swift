/// Matches the broker's PUBACKs to notifications: each notification is published as two QoS 1
/// messages, and counts as published when both message ids were acknowledged. Acks for other
/// messages (events, device state, gateway acks share the client) are ignored.
///
/// The delivery thread registers a notification's ids right after publishing it and matches
/// acks afterwards, on the same thread, so an ack that arrives before its registration is still
/// waiting in the list it matches.
struct PublishTracker: Sendable {
    private var byMessage: [Int32: String] = [:]
    private var remaining: [String: Int] = [:]

    /// Notifications waiting for their PUBACKs.
    var pendingCount: Int { remaining.count }

    mutating func register(_ id: String, messageIDs: [Int32]) {
        for mid in messageIDs { byMessage[mid] = id }
        remaining[id, default: 0] += messageIDs.count
    }

    /// The notifications that `acked` completed.
    mutating func acknowledge(_ acked: [Int32]) -> [String] {
        var complete: [String] = []
        for mid in acked {
            guard let id = byMessage.removeValue(forKey: mid), let left = remaining[id] else { continue }
            if left <= 1 {
                remaining[id] = nil
                complete.append(id)
            } else {
                remaining[id] = left - 1
            }
        }
        return complete
    }
}
