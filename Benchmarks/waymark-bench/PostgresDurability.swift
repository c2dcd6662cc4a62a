import WaymarkPostgres

/// The PostgreSQL durability settings a benchmark ran with, printed with its figures: a rate
/// measured with fsync or synchronous commit off is not what an operator's server does.
enum PostgresDurability {
    /// "fsync=on, full_page_writes=on, synchronous_commit=on (durable: PostgreSQL's defaults)", or
    /// the same naming what is off.
    static func describe(_ connection: PostgresConnection) -> String {
        let names = ["fsync", "full_page_writes", "synchronous_commit"]
        guard let row = try? connection.query("SELECT " + names.map { "current_setting('\($0)')" }.joined(separator: ", ")).first
        else { return "unknown (could not read the server's settings)" }
        let values = names.indices.map { row.text($0) ?? "?" }
        let settings = zip(names, values).map { "\($0)=\($1)" }.joined(separator: ", ")
        let durable = values.allSatisfy { $0 == "on" }
        return settings + (durable ? " (durable: PostgreSQL's defaults)"
                                   : " (NOT durable: a crash of the machine can lose acknowledged data; not how production runs)")
    }
}
