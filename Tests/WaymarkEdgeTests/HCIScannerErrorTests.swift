#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import WaymarkBluetooth

/// The operator-facing messages: each must say what is wrong and the command or setting that fixes it.
@Suite struct HCIScannerErrorTests {
    @Test func adapterNamesAndAddressesParse() throws {
        #expect(try AdapterSelector(parsing: "hci0") == .name("hci0"))
        #expect(try AdapterSelector(parsing: "hci12") == .name("hci12"))
        #expect(try AdapterSelector(parsing: "dc:a6:32:01:02:03") == .address("DC:A6:32:01:02:03"))
    }

    @Test(arguments: ["hci", "hcix", "eth0", "dc:a6:32:01:02", "dc:a6:32:01:02:0g", ""])
    func malformedAdapterIsRejected(text: String) {
        #expect {
            try AdapterSelector(parsing: text)
        } throws: { error in
            guard let e = error as? BluetoothError else { return false }
            return e.code == .invalidConfiguration && e.message.contains("'\(text)'") && e.message.contains("hci0")
        }
    }

    @Test func selectorMatchesByNameOrAddress() {
        let a = AdapterInfo(index: 1, name: "hci1", address: "DC:A6:32:01:02:03", isUp: true)
        #expect(AdapterSelector.name("hci1").matches(a))
        #expect(!AdapterSelector.name("hci0").matches(a))
        #expect(AdapterSelector.address("DC:A6:32:01:02:03").matches(a))
    }

    @Test func noAdapterListsWhatExistsAndWhereToLook() {
        let none = BluetoothError.noAdapter(.name("hci0"), found: [])
        #expect(none.code == .noAdapter)
        #expect(none.message.contains("no Bluetooth adapters found"))
        for hint in ["hciconfig -a", "btmgmt info", "USB Bluetooth dongle", "rfkill list"] {
            #expect(none.message.contains(hint))
        }
        let other = BluetoothError.noAdapter(
            .name("hci0"), found: [AdapterInfo(index: 1, name: "hci1", address: "00:1A:7D:DA:71:13", isUp: false)])
        #expect(other.message.contains("adapters found: hci1 00:1A:7D:DA:71:13 (down)"))
    }

    @Test func permissionErrorsNameTheCapabilitiesAndTheFix() {
        for err in [EPERM, EACCES] {
            let e = BluetoothError.fromErrno(err, call: "LE Set Scan Parameters", adapter: "hci0")
            #expect(e.code == .missingCapabilities)
            #expect(e.message.contains("AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN"))
            #expect(e.message.contains("setcap cap_net_raw,cap_net_admin+eip "))
            #expect(!e.isTransient)
        }
    }

    @Test func networkDownMeansAdapterDownWithBothWaysUp() {
        let e = BluetoothError.fromErrno(ENETDOWN, call: "hci_send_cmd", adapter: "hci0")
        #expect(e.code == .adapterDown)
        #expect(e.message.contains("`hciconfig hci0 up`"))
        #expect(e.message.contains("`btmgmt --index 0 power on`"))
        #expect(e.description.contains("ENETDOWN"))
    }

    @Test(arguments: [ENODEV, EPIPE, EBADFD])
    func vanishedAdapterIsTransient(err: Int32) {
        let e = BluetoothError.fromErrno(err, call: "read", adapter: "hci0")
        #expect(e.code == .adapterLost)
        #expect(e.isTransient)
    }

    @Test func kernelWithoutBluetoothSaysSo() {
        let e = BluetoothError.fromErrno(EAFNOSUPPORT, call: "hci_devinfo", adapter: "hci0")
        #expect(e.code == .bluetoothUnavailable)
        #expect(e.message.contains("modprobe bluetooth"))
    }

    @Test func commandDisallowedIsAConflictWithOtherScanners() {
        let e = BluetoothError.scanConflict("hci0", call: "LE Set Scan Parameters")
        #expect(e.code == .scanConflict)
        #expect(e.hciStatus == 0x0C)
        #expect(e.message.contains("bluetoothd or another program is scanning"))
        #expect(e.message.contains("bluetoothctl scan off"))
        #expect(e.message.contains("hciconfig hci0 reset"))
        #expect(e.description.contains("HCI status 0x0C (Command Disallowed)"))
    }

    @Test func otherControllerStatusesAreNamed() {
        let e = BluetoothError.controllerRejected("hci0", call: "LE Set Scan Enable", status: 0x12)
        #expect(e.description.contains("Invalid HCI Command Parameters"))
        let unknown = BluetoothError.controllerRejected("hci0", call: "LE Set Scan Enable", status: 0x01)
        #expect(unknown.message.contains("may not support Bluetooth LE"))
    }

    @Test func stateNamesForStatus() {
        #expect(ScanState.scanning(adapter: "hci0", mode: .legacy).name == "scanning")
        #expect(ScanState.recovering(BluetoothError(.adapterLost, "gone"), attempt: 2).name == "recovering")
        #expect(ScanState.stopped(nil).description == "stopped")
    }
}
