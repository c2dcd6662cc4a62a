import WaymarkCore

/// Recognition of beacon frames in validated AD structures.
extension Beacon {
    /// Apple's company id.
    public static let appleCompanyID: UInt16 = 0x004C
    /// The Eddystone service UUID, 0xFEAA.
    public static let eddystoneServiceUUID: UInt16 = 0xFEAA

    /// The first beacon frame in `ad`, in AD order, or nil.
    public init?(_ ad: AdvertisingData) {
        guard let beacon = Self.detect(ad.bytes.span) else { return nil }
        self = beacon
    }

    /// The first beacon frame in the AD structures `bytes`, without copying them. Safe on any
    /// bytes: a structure whose length overruns the data ends the search.
    public static func detect(_ bytes: Span<UInt8>) -> Beacon? {
        var cursor = ADCursor(start: 0, end: bytes.count)
        while let s = cursor.next(bytes) {
            let found: Beacon?
            switch s.type {
            case ADType.manufacturerSpecific: found = manufacturer(bytes, s.start, s.end)
            case ADType.serviceData16: found = eddystone(bytes, s.start, s.end)
            default: found = nil
            }
            if let found { return found }
        }
        return nil
    }

    /// iBeacon (`4C 00 02 15` + 21 bytes) or AltBeacon (`cc cc BE AC` + 22 bytes).
    static func manufacturer(_ b: Span<UInt8>, _ start: Int, _ end: Int) -> Beacon? {
        let n = end - start
        guard n >= 4 else { return nil }
        let company = UInt16(b[start]) | UInt16(b[start + 1]) << 8
        if company == appleCompanyID, b[start + 2] == 0x02, b[start + 3] == 0x15, n >= 25 {
            let p = start + 4
            guard let uuid = BeaconUUID(bytes: array(b, p, 16)) else { return nil }
            return .iBeacon(IBeacon(
                uuid: uuid, major: be16(b, p + 16), minor: be16(b, p + 18),
                measuredPower: Int8(bitPattern: b[p + 20])))
        }
        if b[start + 2] == 0xBE, b[start + 3] == 0xAC, n >= 26 {
            let p = start + 4
            return .altBeacon(AltBeacon(
                companyID: company, id1: array(b, p, 16), id2: be16(b, p + 16), id3: be16(b, p + 18),
                referenceRSSI: Int8(bitPattern: b[p + 20]), manufacturerReserved: b[p + 21]))
        }
        return nil
    }

    /// Eddystone frames in 16-bit service data for 0xFEAA.
    static func eddystone(_ b: Span<UInt8>, _ start: Int, _ end: Int) -> Beacon? {
        guard end - start >= 4, be16(b, start) == 0xAAFE else { return nil }  // FEAA little-endian
        let p = start + 2  // frame type
        let n = end - p
        switch b[p] {
        case 0x00 where n >= 18:
            return .eddystoneUID(EddystoneUID(
                txPowerAt0m: Int8(bitPattern: b[p + 1]), namespace: array(b, p + 2, 10),
                instance: array(b, p + 12, 6)))
        case 0x10 where n >= 3:
            guard let url = EddystoneURL.expand(b, scheme: b[p + 2], from: p + 3, to: end) else { return nil }
            return .eddystoneURL(EddystoneURL(txPowerAt0m: Int8(bitPattern: b[p + 1]), url: url))
        case 0x20 where n >= 14 && b[p + 1] == 0x00:
            let mv = be16(b, p + 2)
            let temp = be16(b, p + 4)
            return .eddystoneTLM(EddystoneTLM(
                batteryMillivolts: mv == 0 ? nil : mv,
                temperatureCelsius: temp == 0x8000 ? nil : Double(Int16(bitPattern: temp)) / 256,
                advertisingCount: be32(b, p + 6),
                uptimeSeconds: Double(be32(b, p + 10)) / 10))
        case 0x20 where n >= 18 && b[p + 1] == 0x01:
            return .eddystoneEncryptedTLM(EddystoneEncryptedTLM(
                encrypted: array(b, p + 2, 12), salt: be16(b, p + 14), mic: be16(b, p + 16)))
        case 0x30 where n >= 10:
            return .eddystoneEID(EddystoneEID(txPowerAt0m: Int8(bitPattern: b[p + 1]), eid: array(b, p + 2, 8)))
        default:
            return nil
        }
    }
}

extension EddystoneURL {
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// The URL from the scheme prefix code and the encoded bytes; nil for a reserved scheme code
    /// or a byte that is neither printable ASCII nor an expansion code (0x0E–0x20, 0x7F–0xFF).
    static func expand(_ b: Span<UInt8>, scheme: UInt8, from start: Int, to end: Int) -> String? {
        guard Int(scheme) < schemes.count else { return nil }
        var url = schemes[Int(scheme)]
        for i in start..<end {
            let c = b[i]
            if Int(c) < expansions.count {
                url += expansions[Int(c)]
            } else if c > 0x20 && c < 0x7F {
                url.unicodeScalars.append(Unicode.Scalar(c))
            } else {
                return nil
            }
        }
        return url
    }
}

@inline(__always)
func be16(_ b: Span<UInt8>, _ p: Int) -> UInt16 { UInt16(b[p]) << 8 | UInt16(b[p + 1]) }

@inline(__always)
func be32(_ b: Span<UInt8>, _ p: Int) -> UInt32 {
    UInt32(b[p]) << 24 | UInt32(b[p + 1]) << 16 | UInt32(b[p + 2]) << 8 | UInt32(b[p + 3])
}

@inline(__always)
func array(_ b: Span<UInt8>, _ p: Int, _ count: Int) -> [UInt8] {
    b.extracting(p..<(p + count)).withUnsafeBufferPointer { Array($0) }
}

extension AdvertisingData {
    /// The first recognised beacon frame, or nil.
    public var beacon: Beacon? { Beacon.detect(bytes.span) }
}
