/// An HCI command: its opcode and parameter bytes, with the constructors the scanner sends.
///
/// Built without touching a socket so the exact bytes are unit-tested (Core spec Vol 4 Part E §7.8).
struct HCICommand: Hashable, Sendable {
    var opcode: UInt16
    var parameters: [UInt8]
    /// The command's name in the specification, for error messages.
    var name: String

    /// Opcode group field (upper 6 bits).
    var ogf: UInt16 { opcode >> 10 }
    /// Opcode command field (lower 10 bits).
    var ocf: UInt16 { opcode & 0x03FF }

    static let resetOpcode: UInt16 = 0x0C03

    /// True for the commands whose success switches scanning off or on behind the scanner's back:
    /// HCI_Reset and both scan enables. (A successful Set Scan Parameters changes nothing while
    /// scanning: the controller refuses it then.)
    static func changesScanning(_ opcode: UInt16) -> Bool {
        opcode == resetOpcode || opcode == 0x200C || opcode == 0x2042
    }

    static let readLocalSupportedCommands = HCICommand(
        opcode: 0x1002, parameters: [], name: "Read Local Supported Commands")

    /// LE Set Scan Parameters (0x200B): type, interval, window, own address type (public),
    /// filter policy (accept all).
    static func setScanParameters(_ p: ScanParameters) -> HCICommand {
        var bytes: [UInt8] = [p.active ? 0x01 : 0x00]
        bytes += le16(p.intervalUnits) + le16(p.windowUnits)
        bytes += [0x00, 0x00]
        return HCICommand(opcode: 0x200B, parameters: bytes, name: "LE Set Scan Parameters")
    }

    /// LE Set Scan Enable (0x200C): enable, filter duplicates.
    static func setScanEnable(_ on: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(
            opcode: 0x200C, parameters: [on ? 0x01 : 0x00, on && filterDuplicates ? 0x01 : 0x00],
            name: "LE Set Scan Enable")
    }

    /// LE Set Extended Scan Parameters (0x2041): own address type, filter policy, PHYs (LE 1M
    /// only), then per PHY scan type, interval, window.
    static func setExtendedScanParameters(_ p: ScanParameters) -> HCICommand {
        var bytes: [UInt8] = [0x00, 0x00, 0x01, p.active ? 0x01 : 0x00]
        bytes += le16(p.intervalUnits) + le16(p.windowUnits)
        return HCICommand(opcode: 0x2041, parameters: bytes, name: "LE Set Extended Scan Parameters")
    }

    /// LE Set Extended Scan Enable (0x2042): enable, filter duplicates, duration 0 (until
    /// disabled), period 0 (continuous).
    static func setExtendedScanEnable(_ on: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(
            opcode: 0x2042, parameters: [on ? 0x01 : 0x00, on && filterDuplicates ? 0x01 : 0x00, 0, 0, 0, 0],
            name: "LE Set Extended Scan Enable")
    }

    static func parameters(_ p: ScanParameters, mode: ScanMode) -> HCICommand {
        mode == .extended ? setExtendedScanParameters(p) : setScanParameters(p)
    }

    static func enable(_ on: Bool, filterDuplicates: Bool, mode: ScanMode) -> HCICommand {
        mode == .extended
            ? setExtendedScanEnable(on, filterDuplicates: filterDuplicates)
            : setScanEnable(on, filterDuplicates: filterDuplicates)
    }
}

/// What an HCI event means to a command waiting for its answer.
enum HCICompletion: Equatable {
    /// Command Complete (0x0E) for `opcode`, with its return parameters (status first).
    case complete(opcode: UInt16, returnParameters: [UInt8])
    /// Command Status (0x0F) for `opcode`.
    case status(opcode: UInt16, status: UInt8)
    /// Any other event.
    case other

    /// Classifies an H4 event packet (`04 code len …`).
    init(h4 bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 3, bytes[0] == 0x04 else { self = .other; return }
        switch bytes[1] {
        case 0x0E where bytes.count >= 6:
            self = .complete(
                opcode: UInt16(bytes[4]) | UInt16(bytes[5]) << 8, returnParameters: Array(bytes[6...]))
        case 0x0F where bytes.count >= 7:
            self = .status(opcode: UInt16(bytes[5]) | UInt16(bytes[6]) << 8, status: bytes[3])
        default:
            self = .other
        }
    }
}

func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
