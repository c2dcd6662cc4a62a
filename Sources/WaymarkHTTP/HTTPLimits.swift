public import NIOCore

/// How long and how many connections one of our HTTP servers keeps, so that clients that connect
/// and say nothing, or send their request a byte at a time, cannot hold up anyone else.
///
/// The server is event-driven (SwiftNIO), so a quiet connection costs a file descriptor and a few
/// hundred bytes, never a thread: other requests are answered while it waits. The limits only
/// bound what such connections can hold on to.
public struct HTTPLimits: Sendable, Equatable {
    /// A connection that has not delivered a complete request head within this time (after it
    /// opened, or after the previous response) is closed. This covers idle keep-alive connections
    /// and clients that trickle their headers in.
    public var idleTimeout: TimeAmount
    /// Connections open at once; beyond this, new ones wait in the listen backlog until one closes.
    public var maxConnections: Int
    /// Largest request head accepted, in bytes.
    public var maxHeaderBytes: Int

    public init(idleTimeout: TimeAmount = .seconds(10), maxConnections: Int = 512, maxHeaderBytes: Int = 16 * 1024) {
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// A Prometheus scrape is one short GET every few seconds.
    public static let metrics = HTTPLimits(idleTimeout: .seconds(10), maxConnections: 256, maxHeaderBytes: 8 * 1024)
}
