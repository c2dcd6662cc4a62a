#if canImport(Glibc)
import Glibc
#endif

/// The scan thread's work: open and configure the adapter, pump events, watch the adapter's
/// health, recover, and switch scanning off on stop. Lives on that one thread only.
final class HCIScanSession {
    let selector: AdapterSelector
    let parameters: ScanParameters
    let policy: RecoveryPolicy
    let control: ScanControl
    let onEvent: @Sendable ([UInt8]) -> Void
    private var socket: HCISocket?
    private var mode = ScanMode.legacy
    private var nextHealthCheck = 0

    init(
        selector: AdapterSelector, parameters: ScanParameters, policy: RecoveryPolicy, control: ScanControl,
        onEvent: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.selector = selector
        self.parameters = parameters
        self.policy = policy
        self.control = control
        self.onEvent = onEvent
    }

    /// Runs until stop is requested; reports the first start's outcome through `control.started`.
    func run() {
        do {
            try establish()
        } catch {
            control.startFailure.withLock { $0 = error }
            control.started.signal()
            return
        }
        control.started.signal()
        while !control.isStopRequested {
            do {
                try pump()
            } catch {
                drop(after: error)
                recover(after: error)
            }
        }
        control.set(.stopped(shutdown()))
    }

    private func establish() throws(BluetoothError) {
        let adapter = try HCIAdapter.resolve(selector)
        guard adapter.isUp else { throw .adapterDown(adapter.name) }
        let socket = try HCISocket(adapter: adapter)
        do {
            mode = try chooseMode(socket)
            try expectSuccess(socket, .parameters(parameters, mode: mode))
            try expectSuccess(socket, .enable(true, filterDuplicates: parameters.filterDuplicates, mode: mode))
        } catch {
            socket.close()
            throw error
        }
        self.socket = socket
        nextHealthCheck = monotonicMs() + Int(policy.healthCheckInterval * 1000)
        control.set(.scanning(adapter: adapter.name, mode: mode))
    }

    private func chooseMode(_ socket: HCISocket) throws(BluetoothError) -> ScanMode {
        guard parameters.preferExtended else { return .legacy }
        let returned = try socket.send(.readLocalSupportedCommands, passOn: deliver)
        guard returned.first == HCIStatus.success else { return .legacy }
        return ScanMode.choose(supportedCommands: Array(returned.dropFirst()), preferExtended: true)
    }

    private func expectSuccess(_ socket: HCISocket, _ command: HCICommand) throws(BluetoothError) {
        let returned = try socket.send(command, passOn: deliver)
        let status = returned.first ?? HCIStatus.success
        if status == HCIStatus.success { return }
        if status == HCIStatus.commandDisallowed { throw .scanConflict(socket.adapter.name, call: command.name) }
        throw .controllerRejected(socket.adapter.name, call: command.name, status: status)
    }

    /// Reads one event (or times out), then checks the adapter when a check is due.
    private func pump() throws(BluetoothError) {
        guard let socket else { throw BluetoothError(.adapterLost, "no open adapter") }
        var foreign: UInt16?
        _ = try socket.readEvent(timeoutMs: policy.pollTimeoutMs) { event in
            if event.count > 1, event[1] == 0x3E {
                deliver(event)
            } else if case .complete(let opcode, let returned) = HCICompletion(h4: event),
                HCICommand.changesScanning(opcode), returned.first == HCIStatus.success
            {
                // Only this thread sends on this socket, and not while pumping: someone else did.
                foreign = opcode
            }
        }
        let name = socket.adapter.name
        if foreign == HCICommand.resetOpcode {
            throw BluetoothError(
                .adapterLost, "\(name) was reset (HCI_Reset by the kernel or another program), which switched scanning off",
                call: "HCI_Reset")
        } else if foreign != nil {
            throw BluetoothError(
                .scanConflict,
                "another program (bluetoothd discovery, hcitool, a second scanner) switched LE scanning on \(name) "
                    + "on or off; re-applying the scan parameters", call: "LE Set Scan Enable")
        }
        let now = monotonicMs()
        guard now >= nextHealthCheck else { return }
        nextHealthCheck = now + Int(policy.healthCheckInterval * 1000)
        switch HCIAdapter.info(index: Int32(socket.adapter.index)) {
        case .failure(let error): throw error
        case .success(let info) where !selector.matches(info):
            throw BluetoothError(.adapterLost, "\(name) was replaced by another adapter with the same index")
        case .success(let info) where !info.isUp: throw .adapterDown(name, call: "hci_devinfo")
        case .success: return
        }
    }

    private func deliver(_ event: UnsafeRawBufferPointer) {
        onEvent(Array(event))
    }

    /// Closes the socket after a failure; the controller state is unknown, so nothing is sent.
    private func drop(after error: BluetoothError) {
        socket?.close(restoreFilter: error.code != .adapterLost)
        socket = nil
    }

    /// Retries `establish` with backoff until it succeeds or stop is requested.
    private func recover(after first: BluetoothError) {
        var error = first
        var attempt = 0
        while !control.isStopRequested {
            attempt += 1
            control.set(.recovering(error, attempt: attempt))
            guard sleepUnlessStopped(seconds: policy.delay(attempt: attempt)) else { return }
            do {
                try establish()
                return
            } catch let next {
                error = next
            }
        }
    }

    /// Sleeps in short steps; false when stop was requested meanwhile.
    private func sleepUnlessStopped(seconds: Double) -> Bool {
        let end = monotonicMs() + Int(seconds * 1000)
        while monotonicMs() < end {
            if control.isStopRequested { return false }
            usleep(UInt32(min(50, max(1, end - monotonicMs()))) * 1000)
        }
        return !control.isStopRequested
    }

    /// Disables scanning and closes the socket; the error if scanning could not be disabled.
    private func shutdown() -> BluetoothError? {
        guard let socket else { return nil }
        defer {
            socket.close()
            self.socket = nil
        }
        do {
            let returned = try socket.send(.enable(false, filterDuplicates: false, mode: mode), passOn: deliver)
            let status = returned.first ?? HCIStatus.success
            // Command Disallowed on disable means scanning was already off (older controllers).
            if status == HCIStatus.success || status == HCIStatus.commandDisallowed { return nil }
            let command = HCICommand.enable(false, filterDuplicates: false, mode: mode)
            return .controllerRejected(socket.adapter.name, call: command.name, status: status)
        } catch {
            return error
        }
    }
}
