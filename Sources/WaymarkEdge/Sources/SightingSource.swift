import WaymarkCore

/// What a source reports about scanning, shown in the gateway status (`scan`) and metrics.
public enum SourceState: String, Sendable {
    /// Opening the adapter or the file.
    case starting
    /// The adapter is scanning.
    case on
    /// Not scanning (adapter down or gone; the source is retrying).
    case off
    /// Scanning failed and the source gave up (see the log).
    case error
    /// Replaying a file.
    case replay
    /// The replay reached the end of the file.
    case done
}

/// Receives what a source produces. Implemented by ``EdgeAgent``; called on the source's thread.
public protocol SightingSink: AnyObject, Sendable {
    /// One raw HCI event (H4 `04 3E …` or bare `3E …`) heard at Unix time `time`. The bytes are
    /// only valid during the call.
    func deliver(hciEvent: UnsafeRawBufferPointer, time: Double)
    /// One already-decoded sighting (sightings JSONL replay).
    func deliver(record: SightingRecord)
    /// An input line that could not be parsed (counted and skipped).
    func deliverMalformed(line: Int, reason: String)
    func sourceStateChanged(_ state: SourceState)
}

/// A producer of adverts: the Bluetooth adapter or a replay file.
///
/// ``run(into:)`` blocks on the caller's thread (the agent gives each source a dedicated thread,
/// off Swift's cooperative pool) until the input ends or ``stop()`` is called from another thread.
public protocol SightingSource: AnyObject, Sendable {
    /// For logs and the status, e.g. `hci0` or `replay:capture.txt`.
    var name: String { get }
    /// True when event times are the wall clock (a live radio): the agent then closes windows on
    /// its clock ticks. Replays close windows by event time only.
    var usesWallClock: Bool { get }
    /// Delivers until the end of input or ``stop()``. Throws ``SourceError`` when it cannot run.
    func run(into sink: any SightingSink) throws
    /// Asks ``run(into:)`` to return soon; callable from any thread.
    func stop()
}

/// A source that cannot run, with what to do about it.
public struct SourceError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
