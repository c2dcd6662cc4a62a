import WaymarkCore

/// Reads the text of an `hcidump --raw` capture.
///
/// The format: one or two header lines (`HCI sniffer - …`, `device: …`); then packets, each
/// starting with `> ` (received from the controller) or `< ` (sent to it) followed by hex bytes,
/// continued on lines that start with two spaces. Received packets are H4 packets (`04 3E …` for
/// LE Meta events). Sent packets (commands) are skipped: they never carry advertising reports.
public enum HCIDumpCapture {
    /// One received packet.
    public struct Packet: Sendable {
        /// 1-based line number where the packet starts.
        public var line: Int
        /// The packet bytes, or nil when its text is not hex.
        public var bytes: [UInt8]?
        /// The packet's hex text as it appeared (joined lines).
        public var text: String
    }

    /// The received packets of a capture, in order.
    public static func packets(in capture: String) -> [Packet] {
        var packets: [Packet] = []
        var current: (line: Int, text: String, incoming: Bool)?
        func flush() {
            if let c = current, c.incoming {
                packets.append(Packet(line: c.line, bytes: Hex.decode(c.text), text: c.text))
            }
            current = nil
        }
        var number = 0
        for raw in capture.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasPrefix("> ") || line.hasPrefix("< ") {
                flush()
                current = (number, String(line.dropFirst(2)), line.hasPrefix(">"))
            } else if line.hasPrefix("  "), current != nil {
                current!.text += " " + line.dropFirst(2)
            } else {
                flush()  // header, blank or any other line ends the packet
            }
        }
        flush()
        return packets
    }
}
