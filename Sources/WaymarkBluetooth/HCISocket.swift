import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// The one owner of a raw HCI socket bound to an adapter.
///
/// Confined to the scanner's thread (not Sendable). Opening saves the socket's HCI filter and
/// installs the scanner's (events only: LE Meta, Command Complete, Command Status); `close()`
/// restores the saved filter and closes the descriptor. Forgetting `close()` is a bug: `deinit`
/// closes the descriptor and stops a debug build.
///
/// Commands are written with libbluetooth's `hci_send_cmd` and their answers read here rather
/// than with `hci_send_req`/`hci_le_set_scan_enable`: those collapse every controller status to
/// EIO (so Command Disallowed — another scanner — could not be told apart) and silently discard
/// advertising reports that arrive while they wait; this reader hands such reports on instead.
final class HCISocket {
    let adapter: AdapterInfo
    private var fd: Int32
    private var savedFilter = hci_filter()
    private var buffer = [UInt8](repeating: 0, count: 1024)

    /// Opens `hci_open_dev(adapter.index)` and installs the event filter.
    init(adapter: AdapterInfo) throws(BluetoothError) {
        self.adapter = adapter
        let opened = retryingEINTR { hci_open_dev(Int32(adapter.index)) }
        guard opened.result >= 0 else {
            fd = -1
            throw .fromErrno(opened.errno, call: "hci_open_dev", adapter: adapter.name)
        }
        fd = opened.result
        var length = socklen_t(MemoryLayout<hci_filter>.size)
        let saved = retryingEINTR { getsockopt(fd, SOL_HCI, HCI_FILTER, &savedFilter, &length) }
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(HCI_EVENT_PKT, &filter)
        hci_filter_set_event(EVT_LE_META_EVENT, &filter)
        hci_filter_set_event(EVT_CMD_COMPLETE, &filter)
        hci_filter_set_event(EVT_CMD_STATUS, &filter)
        let set = retryingEINTR {
            setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size))
        }
        if saved.result < 0 || set.result < 0 {
            let err = saved.result < 0 ? saved.errno : set.errno
            close(restoreFilter: false)
            throw .fromErrno(err, call: saved.result < 0 ? "getsockopt(HCI_FILTER)" : "setsockopt(HCI_FILTER)", adapter: adapter.name)
        }
    }

    deinit {
        if fd >= 0 {
            _ = Glibc.close(fd)
            assertionFailure("HCISocket for \(adapter.name) was not closed")
        }
    }

    /// Puts the saved filter back (when asked and possible) and closes the socket. Idempotent.
    func close(restoreFilter: Bool = true) {
        guard fd >= 0 else { return }
        if restoreFilter {
            _ = retryingEINTR { setsockopt(fd, SOL_HCI, HCI_FILTER, &savedFilter, socklen_t(MemoryLayout<hci_filter>.size)) }
        }
        _ = Glibc.close(fd)
        fd = -1
    }

    /// The outcome of waiting for one event.
    enum Read {
        case event
        case timeout
    }

    /// Waits up to `timeoutMs` for one event; on `.event` the packet (H4, type byte first) is
    /// passed to `body` and valid only during the call.
    func readEvent<T>(timeoutMs: Int32, _ body: (UnsafeRawBufferPointer) -> T) throws(BluetoothError) -> T? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = retryingEINTR { poll(&pfd, 1, timeoutMs) }
        guard ready.result >= 0 else { throw .fromErrno(ready.errno, call: "poll", adapter: adapter.name) }
        guard ready.result > 0 else { return nil }
        let n = buffer.withUnsafeMutableBytes { raw in
            retryingEINTR { Int32(truncatingIfNeeded: read(fd, raw.baseAddress, raw.count)) }
        }
        guard n.result > 0 else {
            if n.result < 0, n.errno == EAGAIN { return nil }
            throw .fromErrno(n.result == 0 ? ENODEV : n.errno, call: "read", adapter: adapter.name)
        }
        return buffer.withUnsafeBytes { raw in body(UnsafeRawBufferPointer(rebasing: raw[0..<Int(n.result)])) }
    }

    /// Sends `command` and waits for its Command Complete; returns the return parameters (status
    /// first). LE Meta events read meanwhile go to `passOn`. Throws on a socket error, a timeout,
    /// or a failing Command Status; a non-zero status in Command Complete is the caller's to judge.
    func send(
        _ command: HCICommand, timeoutMs: Int = 2000, passOn: (UnsafeRawBufferPointer) -> Void
    ) throws(BluetoothError) -> [UInt8] {
        var parameters = command.parameters
        let sent = parameters.withUnsafeMutableBytes { raw in
            retryingEINTR {
                hci_send_cmd(fd, command.ogf, command.ocf, UInt8(raw.count), raw.count == 0 ? nil : raw.baseAddress)
            }
        }
        guard sent.result >= 0 else { throw .fromErrno(sent.errno, call: command.name, adapter: adapter.name) }
        let deadline = monotonicMs() + timeoutMs
        while true {
            let left = deadline - monotonicMs()
            guard left > 0 else { throw .fromErrno(ETIMEDOUT, call: command.name, adapter: adapter.name) }
            let answer: HCICompletion? = try readEvent(timeoutMs: Int32(left)) { event in
                let completion = HCICompletion(h4: event)
                if completion == .other, event.count > 1, event[1] == 0x3E { passOn(event) }
                return completion
            }
            switch answer {
            case .complete(let opcode, let returned) where opcode == command.opcode:
                return returned
            case .status(let opcode, let status) where opcode == command.opcode && status != 0:
                return [status]
            default:
                continue
            }
        }
    }
}

/// Milliseconds on the monotonic clock.
func monotonicMs() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
}
