/// Helpers for connection strings: libpq accepts URLs (`postgresql://user:pass@host:port/db?opt=v`)
/// and `key=value` strings; an empty string means "use the libpq environment" (`PGHOST`, `PGPORT`,
/// `PGUSER`, `PGPASSWORD`, `PGDATABASE`, …).
public enum PostgresURL {
    /// `url` with any password replaced by `***`, safe to log: the `user:pass@` part of a URL, a
    /// `password=` query parameter, and a `password=` key in a key/value string.
    public static func masked(_ url: String) -> String {
        var s = url
        if let scheme = s.range(of: "://") {
            let afterScheme = s[scheme.upperBound...]
            let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? s.endIndex
            if let at = s[scheme.upperBound..<authorityEnd].lastIndex(of: "@") {
                let userInfo = s[scheme.upperBound..<at]
                if let colon = userInfo.firstIndex(of: ":") {
                    s.replaceSubrange(s.index(after: colon)..<at, with: "***")
                }
            }
        }
        return maskKey("password", in: s)
    }

    /// A URL (`postgresql://…/db?…`) naming database `name` instead of its own, with the same
    /// server, user and options (a URL without a database gets it appended).
    public static func withDatabase(_ url: String, _ name: String) -> String {
        guard let scheme = url.range(of: "://"), let slash = url[scheme.upperBound...].firstIndex(of: "/") else { return url + "/" + name }
        let query = url[slash...].firstIndex(of: "?").map { String(url[$0...]) } ?? ""
        return String(url[..<slash]) + "/" + name + query
    }

    /// Replaces the value of `key=` (URL query or key/value form) with `***`.
    private static func maskKey(_ key: String, in text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let r = rest.range(of: key + "=") {
            // Only at a parameter boundary: start, `?`, `&` or whitespace before the key.
            let before: Character? = r.lowerBound > rest.startIndex ? rest[rest.index(before: r.lowerBound)] : out.last
            let boundary = before.map { "?& \t".contains($0) } ?? true
            out += rest[..<r.upperBound]
            rest = rest[r.upperBound...]
            guard boundary else { continue }
            let end = rest.firstIndex(where: { $0 == "&" || $0 == " " || $0 == "\t" }) ?? rest.endIndex
            out += "***"
            rest = rest[end...]
        }
        return out + rest
    }
}
