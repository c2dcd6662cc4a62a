/// What the bridge has counted since it started: plain integers that the runtime copies into its
/// Prometheus metrics (`waymark_bridge_*`) and its log.
public struct BridgeCounters: Sendable, Equatable {
    /// Reading messages by format (`espresense`, `theengs`).
    public var messages: [String: Int] = [:]
    /// Receivers' own online/offline messages.
    public var statusMessages = 0
    /// Messages rejected, by ``ForeignRejection`` raw value.
    public var rejected: [String: Int] = [:]
    /// Readings the tracking rules dropped, by ``ForeignIdentityMapper/DropReason`` raw value.
    public var filtered: [String: Int] = [:]
    /// Readings kept whose measured power (tx) was outside −100…+20 dBm and was ignored.
    public var implausibleTx = 0
    /// Readings stamped earlier than their receiver's open window (the clock stepped back);
    /// counted into the open window.
    public var lateReadings = 0
    /// Readings of tracked devices counted into a window.
    public var readings = 0
    /// Batches produced (one per receiver and window with readings).
    public var batches = 0
    /// Boots started after the first one per receiver (after a reconnect or a batch that could not
    /// be sent), so that no sequence gap makes the aggregator wait.
    public var bootsRestarted = 0

    public init() {}
}
