/// A failure of the HCI scanner, with a message that says what went wrong and what to do about it.
///
/// `code` is stable (kebab-case, for logs, metrics and the gateway status); `message` is for the
/// operator and names the command or setting that fixes the problem; `call`, `errno` and
/// `hciStatus` keep the underlying cause.
public struct BluetoothError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Hashable, Sendable {
        /// The kernel has no Bluetooth support (`socket(AF_BLUETOOTH)` fails).
        case bluetoothUnavailable = "bluetooth-unavailable"
        /// The requested adapter does not exist.
        case noAdapter = "no-adapter"
        /// The adapter exists but is not powered up.
        case adapterDown = "adapter-down"
        /// The process may not send raw HCI commands (needs CAP_NET_RAW and CAP_NET_ADMIN).
        case missingCapabilities = "missing-capabilities"
        /// The controller refused because scanning is already on (HCI status 0x0C, Command Disallowed).
        case scanConflict = "scan-conflict"
        /// The controller answered a command with another error status.
        case controllerRejected = "controller-rejected"
        /// The adapter disappeared, was reset or stopped answering while the scanner used it.
        case adapterLost = "adapter-lost"
        /// The controller did not answer a command in time.
        case timeout
        /// The scan parameters or adapter selector are out of range or malformed.
        case invalidConfiguration = "invalid-configuration"
        /// Another system call failed.
        case systemCall = "system-call"
    }

    public var code: Code
    /// What happened and how to fix it.
    public var message: String
    /// The C call that failed, if any (`hci_open_dev`, `read`, `LE Set Scan Enable` …).
    public var call: String?
    /// The errno the call left, if any.
    public var errno: Int32?
    /// The HCI status byte the controller returned, if any.
    public var hciStatus: UInt8?

    public init(
        _ code: Code, _ message: String, call: String? = nil, errno: Int32? = nil, hciStatus: UInt8? = nil
    ) {
        self.code = code
        self.message = message
        self.call = call
        self.errno = errno
        self.hciStatus = hciStatus
    }

    /// True for failures the scanner retries while running (the adapter may come back, the
    /// other scanner may stop); false for those that only a change of configuration or
    /// deployment fixes.
    public var isTransient: Bool {
        switch code {
        case .adapterLost, .adapterDown, .timeout, .scanConflict, .noAdapter, .systemCall, .controllerRejected:
            true
        case .bluetoothUnavailable, .missingCapabilities, .invalidConfiguration:
            false
        }
    }

    public var description: String {
        var cause: [String] = []
        if let call { cause.append(call) }
        if let errno { cause.append(ErrnoName.describe(errno)) }
        if let hciStatus { cause.append("HCI status 0x\(HCIStatus.hex(hciStatus)) (\(HCIStatus.name(hciStatus)))") }
        return cause.isEmpty ? "\(code.rawValue): \(message)" : "\(code.rawValue): \(message) [\(cause.joined(separator: ": "))]"
    }
}
