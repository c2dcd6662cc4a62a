extension DeviceID {
    /// Whether `text` is a device id in one of the canonical forms (see ``DeviceID``): lower-case
    /// hex, dashes where shown, decimal major/minor without leading zeros and at most 65535.
    ///
    /// A single pass over the UTF-8 bytes without allocating: every sighting the aggregator and
    /// `waymark replay` read goes through here.
    static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { Validator(bytes: $0).isValid }
    }

    /// The byte-level grammar of device ids.
    private struct Validator {
        let bytes: UnsafeBufferPointer<UInt8>

        var isValid: Bool {
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return false }
            let rest = colon + 1
            switch slice(0, colon) {
            case "ibeacon": return uuidThenMajorMinor(from: rest, hexAllowed: false)
            case "altbeacon": return uuidThenMajorMinor(from: rest, hexAllowed: true)
            case "eddystone":
                // 10-byte namespace, 6-byte instance.
                return bytes.count == rest + 20 + 1 + 12 && isHex(rest, rest + 20)
                    && bytes[rest + 20] == UInt8(ascii: ":") && isHex(rest + 21, bytes.count)
            case "mac":
                guard bytes.count == rest + 17 else { return false }
                for group in 0..<6 {
                    let at = rest + group * 3
                    guard isHex(at, at + 2), group == 5 || bytes[at + 2] == UInt8(ascii: "-") else { return false }
                }
                return true
            case "anon":
                let n = bytes.count - rest
                return n >= 8 && n % 2 == 0 && isHex(rest, bytes.count)
            default: return false
            }
        }

        /// `<uuid>:<u16>:<u16>`; with `hexAllowed` the first part may instead be plain hex of an
        /// even length of at least 2 (AltBeacon ids that are not 16 bytes).
        private func uuidThenMajorMinor(from start: Int, hexAllowed: Bool) -> Bool {
            guard let c1 = index(of: UInt8(ascii: ":"), from: start),
                  let c2 = index(of: UInt8(ascii: ":"), from: c1 + 1) else { return false }
            guard index(of: UInt8(ascii: ":"), from: c2 + 1) == nil else { return false }
            let idOK = isCanonicalUUID(start, c1)
                || (hexAllowed && (c1 - start) >= 2 && (c1 - start) % 2 == 0 && isHex(start, c1))
            return idOK && isU16(c1 + 1, c2) && isU16(c2 + 1, bytes.count)
        }

        /// 8-4-4-4-12 lower-case hex digits with dashes.
        private func isCanonicalUUID(_ from: Int, _ to: Int) -> Bool {
            guard to - from == 36 else { return false }
            for i in 0..<36 {
                let b = bytes[from + i]
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard b == UInt8(ascii: "-") else { return false }
                } else {
                    guard Self.isLowerHex(b) else { return false }
                }
            }
            return true
        }

        /// 0…65535 in decimal, no sign, no leading zeros.
        private func isU16(_ from: Int, _ to: Int) -> Bool {
            let n = to - from
            guard n >= 1, n <= 5, n == 1 || bytes[from] != UInt8(ascii: "0") else { return false }
            var value = 0
            for i in from..<to {
                let b = bytes[i]
                guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return false }
                value = value * 10 + Int(b - UInt8(ascii: "0"))
            }
            return value <= 65535
        }

        private func isHex(_ from: Int, _ to: Int) -> Bool {
            guard from <= to else { return false }
            for i in from..<to where !Self.isLowerHex(bytes[i]) { return false }
            return true
        }

        private static func isLowerHex(_ b: UInt8) -> Bool {
            (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "f"))
        }

        private func index(of byte: UInt8, from: Int) -> Int? {
            var i = from
            while i < bytes.count {
                if bytes[i] == byte { return i }
                i += 1
            }
            return nil
        }

        private func slice(_ from: Int, _ to: Int) -> Substring {
            // Kind names are short ASCII; compare as a string only for the prefix.
            Substring(decoding: UnsafeBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self)
        }
    }
}

extension DeviceID {
    /// The canonical id that `text` most likely means, when it is one written another way: a MAC
    /// address bare or with colons or upper case (`E7:8F:13:56:24:CE`, `mac:e7:8f:…`), an id in upper
    /// case. Nil when no such reading gives a valid id. For error messages: ids are never rewritten
    /// silently, since the same device written two ways would become two devices.
    public static func likelyMeant(_ text: String) -> DeviceID? {
        let lower = text.lowercased()
        if lower != text, let id = DeviceID(lower) { return id }
        let bare = lower.hasPrefix("mac:") ? lower.dropFirst(4) : Substring(lower)
        let address = String(bare.map { $0 == ":" ? "-" : $0 })
        let groups = address.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.count == 6, groups.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return DeviceID("mac:" + address)
    }
}
