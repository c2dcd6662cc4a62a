#if canImport(Glibc)
import Glibc
#endif

/// The actionable messages. Each factory names the adapter and the command or setting that fixes
/// the problem; none includes a remote device's address.
extension BluetoothError {
    /// The adapter does not exist; lists the adapters that do.
    static func noAdapter(_ selector: AdapterSelector, found: [AdapterInfo]) -> BluetoothError {
        let list = found.isEmpty
            ? "no Bluetooth adapters found"
            : "adapters found: " + found.map { "\($0.name) \($0.address) (\($0.isUp ? "up" : "down"))" }.joined(separator: ", ")
        return BluetoothError(
            .noAdapter,
            "Bluetooth adapter \(selector) not found; \(list). Check `hciconfig -a` or `btmgmt info`, "
                + "that the USB Bluetooth dongle is plugged in (`lsusb`), and that Bluetooth is not blocked "
                + "(`rfkill list`; `rfkill unblock bluetooth`).",
            errno: ENODEV)
    }

    /// The adapter exists but is down.
    static func adapterDown(_ name: String, call: String? = nil) -> BluetoothError {
        BluetoothError(
            .adapterDown,
            "Bluetooth adapter \(name) is down; bring it up with `hciconfig \(name) up` or "
                + "`btmgmt --index \(name.dropFirst(3)) power on` (if it stays down, check `rfkill list`).",
            call: call, errno: call == nil ? nil : ENETDOWN)
    }

    /// The kernel refused a raw HCI operation for lack of privileges.
    static func missingCapabilities(_ name: String, call: String, errno: Int32) -> BluetoothError {
        let program = executablePath() ?? "/usr/local/bin/waymark-edge"
        return BluetoothError(
            .missingCapabilities,
            "not allowed to send HCI commands to \(name): scanning needs CAP_NET_RAW and CAP_NET_ADMIN. "
                + "Under systemd add `AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN` to the service unit; "
                + "when started by hand run `sudo setcap cap_net_raw,cap_net_admin+eip \(program)` (or run as root).",
            call: call, errno: errno)
    }

    /// The controller said Command Disallowed: something else has scanning on.
    static func scanConflict(_ name: String, call: String) -> BluetoothError {
        let daemon = processIDs(named: "bluetoothd").first.map { " (bluetoothd is running as pid \($0))" } ?? ""
        return BluetoothError(
            .scanConflict,
            "\(name) refused \(call) because LE scanning is already on: bluetoothd or another program is "
                + "scanning\(daemon). Stop its discovery (`bluetoothctl scan off`), stop the other program, or "
                + "stop BlueZ (`systemctl stop bluetooth`) if nothing on this gateway needs it. If nothing else "
                + "scans, a previous run may have left scanning on: `hciconfig \(name) reset`.",
            call: call, hciStatus: HCIStatus.commandDisallowed)
    }

    /// The controller answered with an error status other than Command Disallowed.
    static func controllerRejected(_ name: String, call: String, status: UInt8) -> BluetoothError {
        let hint = status == HCIStatus.unknownCommand
            ? " The controller does not implement this command; it may not support Bluetooth LE."
            : ""
        return BluetoothError(
            .controllerRejected, "\(name) rejected \(call).\(hint)", call: call, hciStatus: status)
    }

    /// Maps the errno of a failed call on an adapter to the most useful error.
    static func fromErrno(_ err: Int32, call: String, adapter name: String) -> BluetoothError {
        switch err {
        case EPERM, EACCES:
            return .missingCapabilities(name, call: call, errno: err)
        case ENETDOWN:
            return .adapterDown(name, call: call)
        case ENODEV, EPIPE, EBADFD, ENXIO, EHOSTDOWN:
            return BluetoothError(
                .adapterLost, "Bluetooth adapter \(name) went away (unplugged, reset or removed by the kernel)",
                call: call, errno: err)
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return .unavailable(call: call, errno: err)
        case ETIMEDOUT:
            return BluetoothError(
                .timeout, "\(name) did not answer \(call) in time; the controller may be hung (try `hciconfig \(name) reset`)",
                call: call, errno: err)
        case EBUSY:
            return BluetoothError(
                .scanConflict, "\(name) is in exclusive use by another program (HCI user channel, e.g. a second Bluetooth stack)",
                call: call, errno: err)
        default:
            return BluetoothError(.systemCall, "\(call) failed on \(name)", call: call, errno: err)
        }
    }

    /// The kernel has no Bluetooth sockets.
    static func unavailable(call: String, errno: Int32) -> BluetoothError {
        BluetoothError(
            .bluetoothUnavailable,
            "this kernel has no Bluetooth support (Bluetooth sockets are unavailable); load it with "
                + "`modprobe bluetooth` or use a kernel built with Bluetooth (Raspberry Pi OS and Debian kernels are)",
            call: call, errno: errno)
    }
}

/// The path of the running program, for the `setcap` hint.
func executablePath() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return nil }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Process ids whose command name is `name`, from /proc (empty when /proc is unreadable).
func processIDs(named name: String) -> [Int] {
    guard let dir = opendir("/proc") else { return [] }
    defer { closedir(dir) }
    var pids: [Int] = []
    while let entry = readdir(dir) {
        let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard let pid = Int(entryName) else { continue }
        guard let file = fopen("/proc/\(pid)/comm", "r") else { continue }
        var line = [CChar](repeating: 0, count: 64)
        let got = fgets(&line, Int32(line.count), file) != nil
        fclose(file)
        guard got else { continue }
        let comm = String(decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if comm == name { pids.append(pid) }
    }
    return pids.sorted()
}
