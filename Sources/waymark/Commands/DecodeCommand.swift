import ArgumentParser
import Foundation
import WaymarkAdvertising
import WaymarkJSON

/// `waymark decode`: advertising data or HCI events → one JSON object per input on stdout.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode BLE advertising data or HCI advertising report events to JSON.",
        discussion: """
            Prints one JSON object per input. Advertising data gives {"ad": …, "beacon": …}; an HCI
            event gives {"reports": [ … ]}. Bad input gives {"error": {"code": …, "message": …}} for
            that input, processing continues, and the exit status is 1 if any input failed.
            HCI events may include the H4 indicator byte 0x04 or start at the event code 0x3E.
            In --hcidump mode each object starts with "line" (where the packet starts in the file);
            sent commands and received events that are not advertising reports are skipped
            (counted on stderr).
            """)

    @Option(name: .customLong("ad"), help: "Hex of an AD payload, or '-' for lines of hex on stdin.")
    var ad: String?

    @Option(name: .customLong("hci"), help: "Hex of a full HCI event, or '-' for lines of hex on stdin.")
    var hci: String?

    @Option(name: .customLong("hcidump"), help: "An 'hcidump --raw' capture file.")
    var hcidump: String?

    func validate() throws {
        let given = [ad, hci, hcidump].compactMap { $0 }.count
        guard given == 1 else {
            throw ValidationError("give exactly one of --ad HEX, --hci HEX (or '-' for stdin) and --hcidump FILE")
        }
    }

    func run() throws {
        var failures = 0
        func emit(_ line: DecodeOutput.Line) {
            print(line.json.rendered)
            if line.failed { failures += 1 }
        }
        if let ad {
            try each(ad) { emit(DecodeOutput.advertisingData(hex: $0)) }
        } else if let hci {
            try each(hci) { emit(DecodeOutput.hciEvent(hex: $0)) }
        } else if let hcidump {
            try decodeCapture(path: hcidump, emit: emit)
        }
        if failures > 0 {
            printError("decode: \(failures) input(s) failed")
            throw ExitCode(1)
        }
    }

    /// Calls `body` with `argument`, or with each non-blank, non-comment stdin line for `-`.
    func each(_ argument: String, _ body: (String) -> Void) throws {
        guard argument == "-" else { return body(argument) }
        while let line = readLine() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            body(trimmed)
        }
    }

    func decodeCapture(path: String, emit: (DecodeOutput.Line) -> Void) throws {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            printError("decode: cannot read '\(path)': \(error.localizedDescription); give the path of an 'hcidump --raw' capture")
            throw ExitCode(1)
        }
        let packets = HCIDumpCapture.packets(in: text)
        if packets.isEmpty {
            printError("decode: no packets in '\(path)'; expected lines starting with '> ' as written by 'hcidump --raw'")
            throw ExitCode(1)
        }
        var skipped = 0
        for packet in packets {
            let prefix: [(String, JSONValue)] = [("line", .int(packet.line))]
            guard let bytes = packet.bytes else {
                emit(DecodeOutput.failure(
                    code: "invalid-hex", message: "packet text '\(packet.text.prefix(40))' is not hex bytes; the line is damaged, or the capture was not made with 'hcidump --raw'",
                    prefix: prefix))
                continue
            }
            if DecodeOutput.isNonAdvertisingEvent(bytes) {
                skipped += 1
                continue
            }
            emit(DecodeOutput.hciEvent(bytes: bytes, prefix: prefix))
        }
        if skipped > 0 { printError("decode: skipped \(skipped) event(s) that are not advertising reports") }
    }
}
