/// How the controller scans: passive or active, how often and how long it listens, and whether it
/// may drop duplicate reports.
///
/// Interval and window are in milliseconds and become units of 0.625 ms on the wire; both must
/// lie in 2.5…10240 ms and the window must not exceed the interval. The defaults listen
/// continuously (window = interval = 100 ms) and keep every duplicate, which is what RSSI
/// statistics need.
public struct ScanParameters: Hashable, Sendable {
    /// Active scanning sends scan requests (and so reveals the gateway); passive only listens.
    public var active: Bool
    /// Time from the start of one scan window to the start of the next, in ms.
    public var intervalMs: Double
    /// How long the controller listens in each interval, in ms.
    public var windowMs: Double
    /// Let the controller suppress repeated reports of the same advertiser. Keep false to see
    /// every RSSI sample.
    public var filterDuplicates: Bool
    /// Use the extended scan commands when the controller supports them (needed to receive
    /// extended advertising); legacy commands otherwise.
    public var preferExtended: Bool

    public init(
        active: Bool = false, intervalMs: Double = 100, windowMs: Double = 100, filterDuplicates: Bool = false,
        preferExtended: Bool = true
    ) {
        self.active = active
        self.intervalMs = intervalMs
        self.windowMs = windowMs
        self.filterDuplicates = filterDuplicates
        self.preferExtended = preferExtended
    }

    /// The interval in controller units of 0.625 ms.
    public var intervalUnits: UInt16 { ScanParameters.units(intervalMs) }
    /// The window in controller units of 0.625 ms.
    public var windowUnits: UInt16 { ScanParameters.units(windowMs) }

    /// Throws `invalid-configuration` naming the offending value and the allowed range.
    public func validate() throws(BluetoothError) {
        for (name, value) in [("interval", intervalMs), ("window", windowMs)] {
            guard value.isFinite, value >= 2.5, value <= 10240 else {
                throw BluetoothError(
                    .invalidConfiguration,
                    "scan \(name) \(value) ms is out of range; it must be 2.5…10240 ms (the controller counts in 0.625 ms units)")
            }
        }
        guard windowUnits <= intervalUnits else {
            throw BluetoothError(
                .invalidConfiguration,
                "scan window \(windowMs) ms is longer than the scan interval \(intervalMs) ms; the window must not exceed the interval")
        }
    }

    static func units(_ ms: Double) -> UInt16 {
        guard ms.isFinite else { return 0 }
        let u = (ms / 0.625).rounded()
        return UInt16(max(0, min(u, 65535)))
    }
}

/// Which command set the scanner drives the controller with.
public enum ScanMode: String, Hashable, Sendable {
    /// LE Set Scan Parameters / Enable; the controller sends LE Advertising Report events (0x02).
    case legacy
    /// LE Set Extended Scan Parameters / Enable; the controller sends LE Extended Advertising
    /// Report events (0x0D), for legacy and extended advertisements alike.
    case extended

    /// Extended when the controller supports both extended scan commands (Read Local Supported
    /// Commands octet 37 bits 5 and 6) and the caller allows it.
    static func choose(supportedCommands: [UInt8], preferExtended: Bool) -> ScanMode {
        guard preferExtended, supportedCommands.count > 37 else { return .legacy }
        return supportedCommands[37] & 0x60 == 0x60 ? .extended : .legacy
    }
}
