import ArgumentParser
import Foundation
import Logging
import WaymarkConfig
import WaymarkConsole
import WaymarkCore
import WaymarkService

/// `waymark serve`: the read-only web console (live map, devices, gateways, reports), on
/// Hummingbird. Thin: configuration in, `ConsoleServer` out (docs/console.md).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the read-only web console: live map, devices, gateways and reports.",
        discussion: """
            Reads PostgreSQL (use a login in the read-only waymark_report role) and the aggregator's \
            MQTT topics. Sign-in by token or user and password from the configuration: make their \
            hashes with --hash-token or --hash-password (each reads the secret from standard input). \
            Keys and defaults: deploy/console.example.yaml; put TLS in front with a reverse proxy (deploy/README.md).
            """)

    @Option(help: ArgumentHelp("YAML configuration file (see deploy/console.example.yaml).", valueName: "file")) var config: String?
    @Option(help: ArgumentHelp("The site file (key: site).", valueName: "site.yaml")) var site: String?
    @Option(help: ArgumentHelp("PostgreSQL URL, a read-only login (key: database.url).", valueName: "url")) var database: String?
    @Option(help: ArgumentHelp("MQTT broker URL (key: mqtt.url).", valueName: "url")) var broker: String?
    @Option(help: ArgumentHelp("Address to listen on (key: listen.host, default 127.0.0.1).", valueName: "host")) var host: String?
    @Option(help: ArgumentHelp("Port to listen on, 0 picks a free one (key: listen.port, default 8080).", valueName: "port")) var port: Int?
    @Option(name: [.customLong("set")], parsing: .singleValue, help: ArgumentHelp("Any key as KEY=VALUE (repeatable).", valueName: "key=value"))
    var settings: [String] = []
    @Flag(help: "Read a password from standard input and print its hash for auth.users (NAME:HASH).") var hashPassword = false
    @Flag(help: "Read a token from standard input and print its digest for auth.tokens.") var hashToken = false
    @Flag(help: "Print the effective settings (secrets masked) and exit.") var printConfig = false

    func run() async throws {
        if hashPassword || hashToken {
            guard let secret = readLine(strippingNewline: true), !secret.isEmpty else {
                throw ValidationError("nothing on standard input: pipe the \(hashToken ? "token" : "password") in, e.g. `printf %s 'secret' | waymark serve --hash-\(hashToken ? "token" : "password")`")
            }
            print(hashToken ? ConsoleCredentials.digestText(ofToken: secret) : try PasswordHash.make(password: secret).text)
            return
        }
        var flags: [String: String] = [:]
        for (key, value) in [("site", site), ("database.url", database), ("mqtt.url", broker), ("listen.host", host), ("listen.port", port.map(String.init))] {
            if let value { flags[key] = value }
        }
        for setting in settings {
            guard let eq = setting.firstIndex(of: "=") else { throw ValidationError("--set needs KEY=VALUE, got '\(setting)'") }
            flags[String(setting[..<eq])] = String(setting[setting.index(after: eq)...])
        }
        let layers: ConfigLayers
        let console: ConsoleConfig
        do {
            layers = try ConfigLayers(filePath: config, envPrefix: "WAYMARK_CONSOLE", flags: flags, knownKeys: ConsoleConfig.keys)
            console = try ConsoleConfig.load(layers)
        } catch {
            throw ValidationError("configuration: \(error)")
        }
        if printConfig {
            for line in layers.describe(secretKeys: ConsoleConfig.secretKeys) { print(line) }
            return
        }
        _ = try WaymarkLogging.bootstrap(level: console.logLevel)
        let logger = Logger(label: "waymark.console")
        let venue: Site
        do { venue = try SiteLoader.load(path: console.sitePath).site } catch {
            throw ValidationError("site file \(console.sitePath): \(error)")
        }
        let hub = LiveHub(site: venue, prefix: console.topicPrefix ?? Topics(site: venue.id).prefix)
        let feed = try LiveFeed(hub: hub, settings: console.mqtt, logger: logger)
        let database = ConsoleDatabase(url: console.databaseConnectionString)
        logger.info("starting", metadata: ["site": .string(venue.id), "database": .string(database.maskedURL)])
        let host = console.host
        let app = ConsoleServer.application(config: console, site: venue, hub: hub, database: database, logger: logger) { channel in
            let port = channel.localAddress?.port ?? console.port
            let shown = host == "0.0.0.0" ? "127.0.0.1" : host
            logger.notice("console at http://\(shown):\(port)/")
            // Unbuffered, so a script waiting for the address sees it at once.
            FileHandle.standardOutput.write(Data("waymark serve: console at http://\(shown):\(port)/\n".utf8))
        }
        do {
            try await app.runService()
        } catch {
            feed.close()
            database.stop()
            throw error
        }
        feed.close()
        database.stop()
    }
}
