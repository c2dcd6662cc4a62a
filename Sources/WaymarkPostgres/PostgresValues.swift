/// A Swift value that can be bound as a text parameter (`$1` …) of a statement.
public protocol PostgresEncodable {
    /// PostgreSQL's text input form of the value; `nil` binds NULL.
    var postgresText: String? { get }
}

/// A Swift value that can be read from PostgreSQL's text output form.
public protocol PostgresDecodable {
    /// `text` is nil for SQL NULL. Throws `PostgresDecodingFailure`.
    init(postgresText text: String?) throws
}

/// Why a value could not be decoded (wrapped into a `PostgresError` naming the column).
public struct PostgresDecodingFailure: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

extension String: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { self }
    public init(postgresText text: String?) throws {
        guard let text else { throw PostgresDecodingFailure("NULL where a value was expected") }
        self = text
    }
}

extension Substring: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension Int: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { String(self) }
    public init(postgresText text: String?) throws {
        guard let text else { throw PostgresDecodingFailure("NULL where a number was expected") }
        guard let v = Int(text) else { throw PostgresDecodingFailure("'\(text)' is not a whole number") }
        self = v
    }
}

extension Int64: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { String(self) }
    public init(postgresText text: String?) throws {
        self = Int64(try Int(postgresText: text))
    }
}

extension Int32: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension UInt16: PostgresEncodable {
    public var postgresText: String? { String(self) }
}

extension UInt64: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { String(self) }
    public init(postgresText text: String?) throws {
        guard let text else { throw PostgresDecodingFailure("NULL where a number was expected") }
        guard let v = UInt64(text) else { throw PostgresDecodingFailure("'\(text)' is not a non-negative whole number") }
        self = v
    }
}

extension Double: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return String(self)
    }
    public init(postgresText text: String?) throws {
        guard let text else { throw PostgresDecodingFailure("NULL where a number was expected") }
        switch text {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default:
            guard let v = Double(text) else { throw PostgresDecodingFailure("'\(text)' is not a number") }
            self = v
        }
    }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { self ? "t" : "f" }
    public init(postgresText text: String?) throws {
        switch text {
        case "t", "true": self = true
        case "f", "false": self = false
        case nil: throw PostgresDecodingFailure("NULL where true/false was expected")
        case let other?: throw PostgresDecodingFailure("'\(other)' is not a boolean")
        }
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresText: String? { self?.postgresText }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init(postgresText text: String?) throws {
        self = try text.map { t in try Wrapped(postgresText: t) }
    }
}

/// Arrays bind as PostgreSQL array literals (`{"a","b"}`), each element quoted and escaped, so
/// `WHERE id = ANY($1)` works with a Swift array.
extension Array: PostgresEncodable where Element: PostgresEncodable {
    public var postgresText: String? {
        var out: [UInt8] = [0x7B]
        out.reserveCapacity(count * 16 + 2)
        for (i, element) in enumerated() {
            if i > 0 { out.append(0x2C) }
            guard let text = element.postgresText else { out.append(contentsOf: "NULL".utf8); continue }
            out.append(0x22)
            for b in text.utf8 {
                if b == 0x22 || b == 0x5C { out.append(0x5C) }
                out.append(b)
            }
            out.append(0x22)
        }
        out.append(0x7D)
        return String(decoding: out, as: UTF8.self)
    }
}

/// One-dimensional arrays decode from PostgreSQL's array output (`{a,"b c",NULL}`).
extension Array: PostgresDecodable where Element: PostgresDecodable {
    public init(postgresText text: String?) throws {
        guard let text else { throw PostgresDecodingFailure("NULL where an array was expected") }
        guard text.first == "{", text.last == "}" else { throw PostgresDecodingFailure("'\(text)' is not an array") }
        var out: [Element] = []
        let body = Array<Character>(text.dropFirst().dropLast())
        var i = 0
        while i < body.count {
            var item = ""
            var quoted = false
            if body[i] == "\"" {
                quoted = true
                i += 1
                while i < body.count && body[i] != "\"" {
                    if body[i] == "\\" && i + 1 < body.count { i += 1 }
                    item.append(body[i])
                    i += 1
                }
                i += 1  // closing quote
            } else {
                while i < body.count && body[i] != "," { item.append(body[i]); i += 1 }
            }
            out.append(try Element(postgresText: !quoted && item == "NULL" ? nil : item))
            i += 1  // comma
        }
        self = out
    }
}
