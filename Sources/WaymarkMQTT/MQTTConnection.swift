/// Where and how to connect: broker address, credentials, TLS, keep-alive and last will.
///
/// Build one from a URL (`mqtt://host:1883`, `mqtts://host:8883`, optionally with
/// `user:password@`) with ``init(url:)`` or field by field.
public struct MQTTConnection: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// Seconds between PINGREQs when idle; the broker drops the client after 1.5 × this.
    public var keepalive: Int = 30
    public var username: String?
    /// Never printed by ``description``.
    public var password: String?
    public var tls: TLS?
    public var will: Will?

    /// TLS settings (`mosquitto_tls_set`). Paths are PEM files.
    public struct TLS: Sendable, Equatable {
        /// CA certificate(s) used to verify the broker; nil uses the system trust store path given by `caPath`.
        public var caFile: String?
        /// A directory of hashed CA certificates (alternative to `caFile`).
        public var caPath: String?
        /// Client certificate and key for mutual TLS (both or neither).
        public var certFile: String?
        public var keyFile: String?
        /// Skip the host-name check of the broker's certificate (tests only).
        public var insecure: Bool = false

        public init(caFile: String? = nil, caPath: String? = nil, certFile: String? = nil, keyFile: String? = nil,
                    insecure: Bool = false) {
            self.caFile = caFile
            self.caPath = caPath
            self.certFile = certFile
            self.keyFile = keyFile
            self.insecure = insecure
        }
    }

    /// The message the broker publishes for this client when it disappears without DISCONNECT.
    public struct Will: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
        public var qos: Int
        public var retain: Bool

        public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = true) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }
    }

    public init(host: String, port: Int = 1883, keepalive: Int = 30, username: String? = nil, password: String? = nil,
                tls: TLS? = nil, will: Will? = nil) {
        self.host = host
        self.port = port
        self.keepalive = keepalive
        self.username = username
        self.password = password
        self.tls = tls
        self.will = will
    }

    /// Parses `mqtt://[user[:password]@]host[:port]` or `mqtts://…` (TLS, default port 8883).
    /// An IPv6 host is written in brackets: `mqtt://[::1]:1883`.
    public init(url: String) throws(MQTTError) {
        func bad(_ why: String) -> MQTTError {
            MQTTError(kind: .invalidArgument, call: "MQTTConnection(url:)", code: 0,
                      message: "'\(Self.redacted(url))' is not a broker URL: \(why)",
                      hint: "write it as mqtt://HOST:PORT or mqtts://HOST:PORT (user:password@ optional)")
        }
        let secure: Bool
        var rest: Substring
        if url.hasPrefix("mqtt://") { secure = false; rest = url.dropFirst(7) }
        else if url.hasPrefix("mqtts://") { secure = true; rest = url.dropFirst(8) }
        else { throw bad("the scheme must be mqtt:// or mqtts://") }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else { throw bad("a path is not allowed") }
            rest = rest[..<slash]
        }
        var user: String?, pass: String?
        if let at = rest.lastIndex(of: "@") {
            let cred = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = cred.firstIndex(of: ":") {
                user = String(cred[..<colon]).removingPercentEncodingIfPossible
                pass = String(cred[cred.index(after: colon)...]).removingPercentEncodingIfPossible
            } else {
                user = String(cred).removingPercentEncodingIfPossible
            }
        }
        var host: Substring, portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw bad("unclosed '[' in an IPv6 host") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw bad("junk after ']'") }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw bad("the host is missing") }
        var port = secure ? 8883 : 1883
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else { throw bad("the port must be 1…65535") }
            port = p
        }
        self.init(host: String(host), port: port, username: user, password: pass, tls: secure ? TLS() : nil)
    }

    /// `mqtt(s)://user@host:port`, never the password.
    public var description: String {
        let scheme = tls == nil ? "mqtt" : "mqtts"
        let user = username.map { "\($0)@" } ?? ""
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(user)\(h):\(port)"
    }

    /// `url` with any password replaced by `***`, for error messages.
    static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url.lastIndex(of: "@"), at > scheme.upperBound else { return url }
        let cred = url[scheme.upperBound..<at]
        guard let colon = cred.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }
}

extension String {
    /// Decodes `%XX` escapes (so a password may contain `@` or `:`); leaves the text alone when malformed.
    fileprivate var removingPercentEncodingIfPossible: String {
        guard contains("%") else { return self }
        var out: [UInt8] = []
        var bytes = utf8.makeIterator()
        while let b = bytes.next() {
            if b == UInt8(ascii: "%"), let h = bytes.next(), let l = bytes.next(),
               let v = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16) {
                out.append(v)
            } else if b == UInt8(ascii: "%") {
                return self
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
