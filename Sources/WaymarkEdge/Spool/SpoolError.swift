import Foundation

/// A spool file operation failed: what, on which path, the system's reason, and what to do.
public struct SpoolError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var path: String
    public var errno: Int32
    public var hint: String
    /// A fault of the spool's contents rather than of a system call (then the whole description).
    public var message: String?

    public var description: String {
        if let message { return "spool: " + message }
        return "spool: \(operation) '\(path)' failed: \(String(cString: strerror(errno))) (errno \(errno)); \(hint)"
    }

    /// The spool directory holds batches of another shard layout (`PublishLanes`).
    static func layout(_ message: String) -> SpoolError {
        SpoolError(operation: "open", path: "", errno: 0, hint: "", message: message)
    }

    static func system(_ operation: String, _ path: String, _ code: Int32 = Foundation.errno) -> SpoolError {
        let hint: String
        switch code {
        case EACCES, EPERM, EROFS:
            hint = "make spool.dir writable by the service user (the systemd unit uses StateDirectory=waymark-edge)"
        case ENOSPC, EDQUOT:
            hint = "the disk is full: free space or lower spool.max_bytes"
        case ENOENT:
            hint = "check that spool.dir exists or can be created"
        default:
            hint = "check spool.dir and the storage device"
        }
        return SpoolError(operation: operation, path: path, errno: code, hint: hint)
    }
}
