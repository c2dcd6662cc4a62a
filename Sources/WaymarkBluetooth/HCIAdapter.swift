import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// Adapter discovery through libbluetooth's `hci_devinfo` (the HCIGETDEVINFO ioctl).
public enum HCIAdapter {
    /// The adapters the kernel knows, up or down.
    ///
    /// Throws `bluetooth-unavailable` when the kernel has no Bluetooth sockets at all.
    public static func list() throws(BluetoothError) -> [AdapterInfo] {
        var found: [AdapterInfo] = []
        for index in 0..<Int32(HCI_MAX_DEV) {
            switch info(index: index) {
            case .success(let adapter): found.append(adapter)
            case .failure(let error) where error.code == .bluetoothUnavailable: throw error
            case .failure: continue
            }
        }
        return found
    }

    /// The adapter `selector` names, or `no-adapter` listing those that exist.
    public static func resolve(_ selector: AdapterSelector) throws(BluetoothError) -> AdapterInfo {
        let all = try list()
        guard let adapter = all.first(where: selector.matches) else {
            throw .noAdapter(selector, found: all)
        }
        return adapter
    }

    /// The kernel's view of adapter `index` now.
    static func info(index: Int32) -> Result<AdapterInfo, BluetoothError> {
        var di = hci_dev_info()
        let rc = retryingEINTR { hci_devinfo(index, &di) }
        guard rc.result >= 0 else {
            let err = rc.errno
            if err == EAFNOSUPPORT || err == EPROTONOSUPPORT { return .failure(.unavailable(call: "hci_devinfo", errno: err)) }
            return .failure(.fromErrno(err, call: "hci_devinfo", adapter: "hci\(index)"))
        }
        let name = withUnsafeBytes(of: di.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let address = withUnsafeBytes(of: di.bdaddr.b) { raw in
            raw.reversed().map { byte in
                let digits = Array("0123456789ABCDEF")
                return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
            }.joined(separator: ":")
        }
        let isUp = di.flags & (1 << UInt32(HCI_UP)) != 0
        return .success(AdapterInfo(index: Int(di.dev_id), name: name, address: address, isUp: isUp))
    }
}

/// Runs an errno-style call, retrying while it fails with EINTR; returns the result and the errno
/// of a failure (0 on success).
func retryingEINTR(_ call: () -> Int32) -> (result: Int32, errno: Int32) {
    while true {
        let rc = call()
        if rc >= 0 { return (rc, 0) }
        let err = errno
        if err != EINTR { return (rc, err) }
    }
}
