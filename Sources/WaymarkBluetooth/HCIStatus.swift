#if canImport(Glibc)
import Glibc
#endif

/// HCI status codes the scanner reports by name (Core spec Vol 1 Part F).
public enum HCIStatus {
    public static let success: UInt8 = 0x00
    public static let unknownCommand: UInt8 = 0x01
    public static let commandDisallowed: UInt8 = 0x0C

    /// The specification's name of a status code.
    public static func name(_ status: UInt8) -> String {
        switch status {
        case 0x00: "Success"
        case 0x01: "Unknown HCI Command"
        case 0x02: "Unknown Connection Identifier"
        case 0x03: "Hardware Failure"
        case 0x07: "Memory Capacity Exceeded"
        case 0x0C: "Command Disallowed"
        case 0x0D: "Connection Rejected due to Limited Resources"
        case 0x11: "Unsupported Feature or Parameter Value"
        case 0x12: "Invalid HCI Command Parameters"
        case 0x1F: "Unspecified Error"
        case 0x3A: "Controller Busy"
        default: "error"
        }
    }

    static func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 0x0F)]])
    }
}

/// Symbolic names for the errno values the scanner meets, so messages read `ENETDOWN (Network is down)`.
enum ErrnoName {
    static func describe(_ err: Int32) -> String {
        let names: [Int32: String] = [
            1: "EPERM", 4: "EINTR", 5: "EIO", 6: "ENXIO", 9: "EBADF", 11: "EAGAIN", 13: "EACCES", 16: "EBUSY",
            19: "ENODEV", 22: "EINVAL", 32: "EPIPE", 77: "EBADFD", 93: "EPROTONOSUPPORT", 97: "EAFNOSUPPORT",
            100: "ENETDOWN", 110: "ETIMEDOUT", 112: "EHOSTDOWN",
        ]
        let text = String(cString: strerror(err))
        return "\(names[err] ?? "errno \(err)") (\(text))"
    }
}
