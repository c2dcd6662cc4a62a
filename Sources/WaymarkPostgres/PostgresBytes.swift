/// Raw bytes for a `bytea` column. As a parameter of `PostgresConnection.query` it is sent in
/// PostgreSQL's binary format, byte for byte, with no hex or escape encoding on either side
/// (cast it in the SQL: `$2::bytea`); inside an array parameter it falls back to the hex text
/// form. Read a `bytea` column (text output `\x…`) back with `row.decode(PostgresBytes.self, i)`.
public struct PostgresBytes: Sendable, Hashable, PostgresEncodable, PostgresDecodable {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// PostgreSQL's hex text form, `\x0a1b…`.
    public var postgresText: String? {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [0x5C, 0x78]
        out.reserveCapacity(2 + 2 * bytes.count)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses the hex output form (`bytea_output = hex`, the default since PostgreSQL 9.0).
    public init(postgresText text: String?) throws {
        guard let text else { throw PostgresDecodingFailure("NULL where bytes were expected") }
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == 0x5C, utf8[1] == 0x78, utf8.count % 2 == 0 else {
            throw PostgresDecodingFailure("bytea value is not in hex form (\\x…); set bytea_output = hex")
        }
        func nibble(_ c: UInt8) throws -> UInt8 {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: throw PostgresDecodingFailure("bytea value has a character that is not a hex digit")
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity((utf8.count - 2) / 2)
        var i = 2
        while i < utf8.count {
            out.append(try nibble(utf8[i]) << 4 | nibble(utf8[i + 1]))
            i += 2
        }
        bytes = out
    }
}
