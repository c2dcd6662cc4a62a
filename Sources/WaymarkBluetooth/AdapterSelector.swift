/// Which local Bluetooth adapter to scan with.
public enum AdapterSelector: Hashable, Sendable, CustomStringConvertible {
    /// By kernel name, e.g. `hci0`.
    case name(String)
    /// By the adapter's own address, `AA:BB:CC:DD:EE:FF` (survives renumbering when several
    /// dongles are plugged in).
    case address(String)

    /// The default adapter, `hci0`.
    public static let `default` = AdapterSelector.name("hci0")

    /// Parses `hciN` or a colon-separated address.
    public init(parsing text: String) throws(BluetoothError) {
        if AdapterSelector.isName(text) {
            self = .name(text)
        } else if let normalised = AdapterSelector.normalisedAddress(text) {
            self = .address(normalised)
        } else {
            throw BluetoothError(
                .invalidConfiguration,
                "adapter '\(text)' is neither an adapter name like hci0 nor an adapter address like AA:BB:CC:DD:EE:FF; "
                    + "`hciconfig` lists both")
        }
    }

    public var description: String {
        switch self {
        case .name(let n): n
        case .address(let a): a
        }
    }

    /// True when this selector picks `adapter`.
    public func matches(_ adapter: AdapterInfo) -> Bool {
        switch self {
        case .name(let n): adapter.name == n
        case .address(let a): adapter.address == a
        }
    }

    static func isName(_ text: String) -> Bool {
        guard text.hasPrefix("hci"), text.count > 3, text.count <= 7 else { return false }
        return text.dropFirst(3).allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Upper-case `AA:BB:CC:DD:EE:FF`, or nil when `text` is not six hex pairs.
    static func normalisedAddress(_ text: String) -> String? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6,
            parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isHexDigit } })
        else { return nil }
        return parts.joined(separator: ":").uppercased()
    }
}

/// A local adapter as the kernel describes it.
public struct AdapterInfo: Hashable, Sendable {
    /// Kernel device index (the N of hciN).
    public var index: Int
    public var name: String
    /// The adapter's own address, upper-case `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// Whether the adapter is powered up (HCI_UP).
    public var isUp: Bool

    public init(index: Int, name: String, address: String, isUp: Bool) {
        self.index = index
        self.name = name
        self.address = address
        self.isUp = isUp
    }
}
