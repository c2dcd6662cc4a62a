import Testing

@testable import WaymarkBluetooth

/// The bytes the scanner sends and how it reads the controller's answers (no kernel needed; the
/// VM test in tests/hci-vm proves them against a real one).
@Suite struct HCIScannerCommandTests {
    @Test func defaultParametersListenContinuouslyAndKeepDuplicates() throws {
        let p = ScanParameters()
        try p.validate()
        #expect(p.active == false)
        #expect(p.filterDuplicates == false)
        #expect(p.intervalUnits == 160)
        #expect(p.windowUnits == 160)
    }

    @Test func millisecondsBecomeUnitsOf0_625ms() {
        #expect(ScanParameters(intervalMs: 2.5, windowMs: 2.5).intervalUnits == 4)
        #expect(ScanParameters(intervalMs: 10240, windowMs: 30).intervalUnits == 16384)
        #expect(ScanParameters(intervalMs: 60, windowMs: 30).windowUnits == 48)
    }

    @Test func windowLongerThanIntervalIsRejectedWithBothValues() {
        #expect {
            try ScanParameters(intervalMs: 50, windowMs: 100).validate()
        } throws: { error in
            guard let e = error as? BluetoothError else { return false }
            return e.code == .invalidConfiguration && e.message.contains("window 100.0 ms")
                && e.message.contains("interval 50.0 ms")
        }
    }

    @Test(arguments: [1.0, 0, -5, 20000, Double.nan])
    func outOfRangeTimesAreRejected(ms: Double) {
        #expect {
            try ScanParameters(intervalMs: ms, windowMs: 2.5).validate()
        } throws: { error in
            (error as? BluetoothError)?.message.contains("2.5…10240 ms") == true
        }
    }

    @Test func legacyScanParametersBytes() {
        let c = HCICommand.setScanParameters(ScanParameters(active: true, intervalMs: 100, windowMs: 50))
        #expect(c.opcode == 0x200B)
        #expect(c.ogf == 0x08 && c.ocf == 0x000B)
        #expect(c.parameters == [0x01, 0xA0, 0x00, 0x50, 0x00, 0x00, 0x00])
    }

    @Test func legacyEnableAndDisableBytes() {
        #expect(HCICommand.setScanEnable(true, filterDuplicates: false).parameters == [0x01, 0x00])
        #expect(HCICommand.setScanEnable(true, filterDuplicates: true).parameters == [0x01, 0x01])
        #expect(HCICommand.setScanEnable(false, filterDuplicates: true).parameters == [0x00, 0x00])
        #expect(HCICommand.setScanEnable(false, filterDuplicates: false).opcode == 0x200C)
    }

    @Test func extendedScanCommandBytes() {
        let p = HCICommand.parameters(ScanParameters(intervalMs: 100, windowMs: 100), mode: .extended)
        #expect(p.opcode == 0x2041)
        #expect(p.parameters == [0x00, 0x00, 0x01, 0x00, 0xA0, 0x00, 0xA0, 0x00])
        let e = HCICommand.enable(true, filterDuplicates: false, mode: .extended)
        #expect(e.opcode == 0x2042)
        #expect(e.parameters == [0x01, 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    @Test func extendedModeNeedsBothExtendedScanCommands() {
        var commands = [UInt8](repeating: 0, count: 64)
        #expect(ScanMode.choose(supportedCommands: commands, preferExtended: true) == .legacy)
        commands[37] = 0x20
        #expect(ScanMode.choose(supportedCommands: commands, preferExtended: true) == .legacy)
        commands[37] = 0x60
        #expect(ScanMode.choose(supportedCommands: commands, preferExtended: true) == .extended)
        #expect(ScanMode.choose(supportedCommands: commands, preferExtended: false) == .legacy)
        #expect(ScanMode.choose(supportedCommands: [0x60], preferExtended: true) == .legacy)
    }

    @Test func commandCompleteAndStatusAreRecognised() {
        func parse(_ bytes: [UInt8]) -> HCICompletion { bytes.withUnsafeBytes { HCICompletion(h4: $0) } }
        #expect(parse([0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x0C]) == .complete(opcode: 0x200C, returnParameters: [0x0C]))
        #expect(parse([0x04, 0x0F, 0x04, 0x01, 0x01, 0x41, 0x20]) == .status(opcode: 0x2041, status: 0x01))
        #expect(parse([0x04, 0x3E, 0x03, 0x02, 0x01, 0x00]) == .other)
        #expect(parse([0x04, 0x0E]) == .other)
        #expect(parse([]) == .other)
    }

    @Test func backoffDoublesUpToTheCap() {
        let policy = RecoveryPolicy(initialDelay: 0.5, maxDelay: 10)
        #expect((1...7).map { policy.delay(attempt: $0) } == [0.5, 1, 2, 4, 8, 10, 10])
    }
}

extension HCIScannerCommandTests {
    @Test func foreignResetsAndScanEnablesAreNoticed() {
        #expect(HCICommand.changesScanning(0x0C03))
        #expect(HCICommand.changesScanning(0x200C))
        #expect(HCICommand.changesScanning(0x2042))
        #expect(!HCICommand.changesScanning(0x200B))
        #expect(!HCICommand.changesScanning(0x1002))
    }
}
