// swift-tools-version:6.1
//
// Waymark: multi-gateway passive tracking of Bluetooth LE beacons.
//
// The target graph mirrors the architecture (see README.md, "Architecture"):
//   pure core    WaymarkJSON, WaymarkCore, WaymarkAdvertising, WaymarkFusion, WaymarkSimulation,
//                WaymarkProtobuf (the protobuf batch encoding, over SwiftProtobuf),
//                WaymarkPrivacy (pseudonyms), WaymarkBridge (foreign receivers), WaymarkHomeAssistant,
//                WaymarkNotify (notification rules over the engine's output)
//   C bindings   CBlueZ, CMosquitto, CLibPQ  (one .systemLibrary each)
//   C wrappers   WaymarkBluetooth, WaymarkMQTT, WaymarkPostgres
//   services     WaymarkEdge, WaymarkAggregator, WaymarkReports, WaymarkConfig
//   programs     waymark, waymark-edge, waymark-aggregator, waymark-bench
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "waymark",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "waymark", targets: ["waymark"]),
        .executable(name: "waymark-edge", targets: ["waymark-edge"]),
        .executable(name: "waymark-aggregator", targets: ["waymark-aggregator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The HTTP servers: the metrics endpoints and `waymark serve`. Without its default traits
        // (swift-configuration support), which nothing here uses.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // The protobuf batch encoding (proto/waymark_batch.proto): the runtime library only. The
        // generated code is committed (scripts/generate-protobuf.sh), so no plugin or protoc here.
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        // Heap (HeapModule only): shortest paths in the beacon graph, the engine's free device
        // slots, `waymark replay`'s reordering of lines by time.
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // MARK: Pure core (no C, no I/O)
        // The one JSON reader and writer; depends on nothing.
        .target(name: "WaymarkJSON", swiftSettings: strict),
        .target(
            name: "WaymarkCore",
            dependencies: ["WaymarkJSON", .product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: strict),
        .target(name: "WaymarkAdvertising", dependencies: ["WaymarkCore", "WaymarkJSON"], swiftSettings: strict),
        .target(
            name: "WaymarkFusion",
            dependencies: ["WaymarkCore", .product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: strict),
        .target(name: "WaymarkSimulation", dependencies: ["WaymarkCore", "WaymarkFusion", "WaymarkJSON"], swiftSettings: strict),
        // The keyed-hash pseudonyms of DESIGN.md §3, shared by waymark-edge and waymark bridge.
        .target(
            name: "WaymarkPrivacy",
            dependencies: ["WaymarkCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        // ESPresense and Theengs/OpenMQTTGateway messages → edge batches (waymark bridge).
        .target(
            name: "WaymarkBridge",
            dependencies: ["WaymarkCore", "WaymarkAdvertising", "WaymarkJSON", "WaymarkPrivacy"],
            swiftSettings: strict),
        // The sighting batch in protocol buffers (the edge's `publish.encoding: protobuf`): the code
        // generated from proto/waymark_batch.proto and its mapping from `SightingBatch`.
        .target(
            name: "WaymarkProtobuf",
            dependencies: ["WaymarkCore", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            swiftSettings: strict),
        // Device states → Home Assistant MQTT discovery and states (waymark homeassistant).
        .target(name: "WaymarkHomeAssistant", dependencies: ["WaymarkCore", "WaymarkJSON"], swiftSettings: strict),
        // Notification rules evaluated over the engine's outputs: one pure evaluator for the
        // aggregator and `waymark replay`. swift-crypto only for the SHA-256 of notification ids.
        .target(
            name: "WaymarkNotify",
            dependencies: ["WaymarkCore", "WaymarkFusion", "WaymarkJSON", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),

        // MARK: C libraries, each behind one Swift wrapper module
        .systemLibrary(
            name: "CBlueZ", path: "Sources/CBlueZ", pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(
            name: "CMosquitto", path: "Sources/CMosquitto", pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(
            name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .target(name: "WaymarkBluetooth", dependencies: ["CBlueZ", "WaymarkAdvertising"], swiftSettings: strict),
        .target(name: "WaymarkMQTT", dependencies: ["CMosquitto"], swiftSettings: strict),
        .target(name: "WaymarkPostgres", dependencies: ["CLibPQ"], swiftSettings: strict),

        // MARK: Configuration and services
        .target(
            name: "WaymarkConfig",
            dependencies: ["WaymarkCore", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict),
        .target(
            name: "WaymarkService",
            dependencies: [
                "WaymarkCore", "WaymarkMQTT",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // The one HTTP stack (Hummingbird over SwiftNIO): the metrics endpoint of both services,
        // with limits that keep idle and slow clients from holding up a scrape.
        .target(
            name: "WaymarkHTTP",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .target(
            name: "WaymarkEdge",
            dependencies: [
                "WaymarkCore", "WaymarkAdvertising", "WaymarkConfig", "WaymarkMQTT", "WaymarkBluetooth",
                "WaymarkService", "WaymarkJSON", "WaymarkPrivacy", "WaymarkHTTP", "WaymarkProtobuf",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .target(
            name: "WaymarkAggregator",
            dependencies: [
                "WaymarkCore", "WaymarkFusion", "WaymarkConfig", "WaymarkMQTT", "WaymarkPostgres",
                "WaymarkService", "WaymarkJSON", "WaymarkNotify", "WaymarkHTTP", "WaymarkProtobuf",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict),
        // `waymark serve`: the read-only web console (live map over MQTT, devices, gateways,
        // reports through WaymarkReports), on the same HTTP stack.
        .target(
            name: "WaymarkConsole",
            dependencies: [
                "WaymarkCore", "WaymarkJSON", "WaymarkMQTT", "WaymarkPostgres", "WaymarkReports", "WaymarkService", "WaymarkHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .target(
            name: "WaymarkAccuracy",
            dependencies: ["WaymarkCore", "WaymarkSimulation", "WaymarkConfig", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict),
        .target(
            name: "WaymarkReports",
            dependencies: ["WaymarkCore", "WaymarkPostgres"],
            swiftSettings: strict),

        // MARK: Programs (thin @main over testable libraries)
        .executableTarget(
            name: "waymark",
            dependencies: [
                "WaymarkCore", "WaymarkAdvertising", "WaymarkFusion", "WaymarkSimulation", "WaymarkConfig",
                "WaymarkReports", "WaymarkPostgres", "WaymarkMQTT", "WaymarkJSON", "WaymarkNotify",
                "WaymarkBridge", "WaymarkHomeAssistant", "WaymarkConsole", "WaymarkService", "WaymarkHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "waymark-edge",
            dependencies: [
                "WaymarkEdge", "WaymarkAdvertising", "WaymarkBluetooth", "WaymarkJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "waymark-aggregator",
            dependencies: [
                "WaymarkAggregator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "waymark-bench",
            dependencies: ["WaymarkCore", "WaymarkAdvertising", "WaymarkFusion", "WaymarkSimulation", "WaymarkConfig",
                           "WaymarkPostgres", "WaymarkReports", "WaymarkAggregator", "WaymarkMQTT", "WaymarkEdge", "WaymarkService",
                           "WaymarkAccuracy", "WaymarkProtobuf", "WaymarkHTTP", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Benchmarks/waymark-bench",
            swiftSettings: strict),

        // MARK: Tests
        // Random JSON and Foundation as the reference, for the agreement tests of WaymarkJSON and BatchDecoder.
        .target(name: "JSONFuzzSupport", path: "Tests/JSONFuzzSupport"),
        // Raw TCP clients (idle, trickling, one-shot) for the HTTP servers' tests.
        .target(name: "HTTPTestSupport", path: "Tests/HTTPTestSupport"),
        .testTarget(
            name: "WaymarkHTTPTests",
            dependencies: ["WaymarkHTTP", "HTTPTestSupport", .product(name: "Prometheus", package: "swift-prometheus"),
                           .product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(name: "WaymarkConsoleTests", dependencies: ["WaymarkConsole", "WaymarkConfig", "WaymarkCore", "WaymarkService", "WaymarkReports"]),
        .testTarget(name: "WaymarkReportsTests", dependencies: ["WaymarkReports", "WaymarkConfig", "WaymarkCore"]),
        .testTarget(name: "WaymarkJSONTests", dependencies: ["WaymarkJSON", "JSONFuzzSupport"]),
        .testTarget(name: "WaymarkCoreTests", dependencies: ["WaymarkCore", "WaymarkConfig"]),
        .testTarget(name: "WaymarkAdvertisingTests", dependencies: ["WaymarkAdvertising", "WaymarkJSON"]),
        .testTarget(name: "WaymarkFusionTests", dependencies: ["WaymarkFusion", "WaymarkConfig"]),
        .testTarget(name: "WaymarkNotifyTests", dependencies: ["WaymarkNotify", "WaymarkFusion", "WaymarkConfig"]),
        .testTarget(name: "WaymarkSimulationTests", dependencies: ["WaymarkSimulation", "WaymarkConfig", "WaymarkJSON"]),
        .testTarget(name: "WaymarkAccuracyTests", dependencies: ["WaymarkAccuracy", "WaymarkSimulation"]),
        .testTarget(name: "WaymarkPrivacyTests", dependencies: ["WaymarkPrivacy"]),
        .testTarget(name: "WaymarkBridgeTests", dependencies: ["WaymarkBridge", "WaymarkConfig", "WaymarkPrivacy"]),
        .testTarget(name: "WaymarkHomeAssistantTests", dependencies: ["WaymarkHomeAssistant", "WaymarkConfig", "WaymarkJSON"]),
        .testTarget(name: "WaymarkEdgeTests", dependencies: ["WaymarkEdge", "WaymarkMQTT", "WaymarkBluetooth", "WaymarkService", "WaymarkProtobuf"]),
        .testTarget(
            name: "WaymarkAggregatorTests",
            dependencies: ["WaymarkAggregator", "WaymarkPostgres", "WaymarkService", "WaymarkSimulation", "WaymarkConfig",
                           "WaymarkNotify", "JSONFuzzSupport", "WaymarkProtobuf", "WaymarkEdge"]),
        .testTarget(
            name: "WaymarkIntegrationTests",
            dependencies: ["WaymarkEdge", "WaymarkAggregator", "WaymarkReports", "WaymarkMQTT", "WaymarkPostgres",
                           "WaymarkNotify", "WaymarkConfig", "HTTPTestSupport", "WaymarkProtobuf",
                           .product(name: "Crypto", package: "swift-crypto"),
                           // The local webhook receiver of the notification delivery test.
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio")]),
    ]
)
