// swift-tools-version: 6.2
import PackageDescription

/// Lantern: one backend, five apps. Executables live under `Services/`, shared libraries under `Shared/`.
/// Each service is a library (`…Service`) plus a tiny executable, so tests import the library.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
let hummingbirdTesting = Target.Dependency.product(name: "HummingbirdTesting", package: "hummingbird")
let postgres = Target.Dependency.product(name: "PostgresNIO", package: "postgres-nio")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let metrics = Target.Dependency.product(name: "Metrics", package: "swift-metrics")
let prometheus = Target.Dependency.product(name: "Prometheus", package: "swift-prometheus")
let lifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let configuration = Target.Dependency.product(name: "Configuration", package: "swift-configuration")
let jwt = Target.Dependency.product(name: "JWTKit", package: "jwt-kit")
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let httpClient = Target.Dependency.product(name: "AsyncHTTPClient", package: "async-http-client")
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
let httpTypes = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")
let nioFoundation = Target.Dependency.product(name: "NIOFoundationCompat", package: "swift-nio")
let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")
let tracing = Target.Dependency.product(name: "Tracing", package: "swift-distributed-tracing")
let otel = Target.Dependency.product(name: "OTel", package: "swift-otel")

/// A service of the stack: everything in `Services/<folder>/` — its library (`Sources/<library>`, the code; tests
/// import it), a one-line executable (`Sources/<executable>`) and its tests (`Tests/<library>Tests`).
///
/// The executables are also listed in `Services/services.tsv` with their ports (scripts, the image, the deployment
/// tests read that); a deployment test checks that the two agree. SwiftPM caches a manifest by its text, so a
/// manifest that read the list or the folders itself would not notice a new service: the entry below is the one
/// line a new service adds here.
struct Service {
    var executable: String
    var folder: String
    var library: String
    var dependencies: [Target.Dependency]
    var resources: [Resource]
    var testDependencies: [Target.Dependency]
    var testExclude: [String]

    init(_ executable: String, folder: String, library: String, dependencies: [Target.Dependency],
         resources: [Resource] = [.copy("Migrations")], testDependencies: [Target.Dependency] = [],
         testExclude: [String] = []) {
        self.executable = executable
        self.folder = folder
        self.library = library
        self.dependencies = dependencies
        self.resources = resources
        self.testDependencies = testDependencies
        self.testExclude = testExclude
    }

    var targets: [Target] {
        [
            .target(
                name: library,
                dependencies: ["LanternService", "LanternContracts", "LanternCore", "LanternHTTP", hummingbird, lifecycle,
                               logging] + dependencies,
                path: "Services/\(folder)/Sources/\(library)",
                resources: resources,
                swiftSettings: strict
            ),
            .executableTarget(
                name: executable,
                dependencies: [.target(name: library), "LanternHTTP"],
                path: "Services/\(folder)/Sources/\(executable)",
                swiftSettings: strict
            ),
            .testTarget(
                name: "\(library)Tests",
                dependencies: [.target(name: library), "LanternContracts", "LanternCore", "LanternTestSupport",
                               hummingbird, hummingbirdTesting] + testDependencies,
                path: "Services/\(folder)/Tests/\(library)Tests",
                exclude: testExclude,
                swiftSettings: strict
            ),
        ]
    }
}

/// The services, in the order of `Services/services.tsv`.
let services: [Service] = [
    Service(
        "identity", folder: "Identity", library: "IdentityService",
        dependencies: ["LanternDatabase", "LanternEvents", "LanternRedis", "LanternTokens", postgres, jwt, crypto,
                       httpClient, nioFoundation],
        testDependencies: ["DevIdentity", jwt, crypto]
    ),
    Service(
        "media", folder: "Media", library: "MediaService",
        dependencies: ["ImageSanitizer", "MediaUpload", "LanternDatabase", "LanternEvents", "LanternObjectStorage", "LanternRedis", "LanternTokens", httpTypes,
                       postgres, crypto, httpClient, nioCore, nioPosix, nioFoundation],
        testDependencies: ["LanternObjectStorage", postgres]
    ),
    Service(
        "astrology", folder: "Astrology", library: "AstrologyService",
        dependencies: ["Ephemeris", "LanternDatabase", "LanternTokens", postgres, crypto, httpClient],
        testDependencies: ["Ephemeris", "LanternDatabase", postgres],
        // Reference data read by path (lunar-python's lunar years: scripts/reference/lunar-year-windows.py).
        testExclude: ["Reference"]
    ),
    Service(
        "content", folder: "Content", library: "ContentService",
        // The assembly; each app is a target of its own (`contentApps` below), what they share is `ContentKit`.
        dependencies: ["ContentKit", "LuckyDayContent", "AstroSvitlaContent", "RoastMeLaterContent", "LanternEvents", "LanternLLM", "LanternTokens",
                       postgres],
        resources: [],
        testDependencies: ["ContentKit", "LuckyDayContent", "AstroSvitlaContent", "RoastMeLaterContent", "LanternAppStore", "LanternEvents", "LanternLLM", "LanternRedis",
                           "LanternTokens", postgres, httpClient, nioPosix]
    ),
    Service(
        "gamification", folder: "Gamification", library: "GamificationService",
        dependencies: ["LanternDatabase", "LanternEvents", "LanternRedis", "LanternTokens", postgres, crypto],
        resources: [.copy("Migrations"), .copy("Catalogue")],
        testDependencies: ["LanternEvents", "LanternRedis", "LanternTokens", postgres]
    ),
    Service(
        "health-brain", folder: "HealthBrain", library: "HealthBrainService",
        dependencies: ["LanternDatabase", "LanternEvents", "LanternLLM", "LanternObjectStorage", "LanternRedis", "LanternTokens", postgres, crypto],
        resources: [.copy("Migrations"), .copy("Catalogue")],
        testDependencies: ["LanternEvents", "LanternLLM", "LanternObjectStorage", "LanternRedis", "LanternTokens", postgres]
    ),
    Service(
        "push-worker", folder: "PushWorker", library: "PushWorker",
        dependencies: ["LanternDatabase", "LanternEvents", "LanternRedis", postgres, jwt, crypto, httpClient, nioSSL,
                       nioPosix, nioCore, nioFoundation, metrics],
        resources: [.copy("Migrations"), .copy("Catalogue")],
        testDependencies: ["LanternEvents", "LanternRedis", jwt, crypto, postgres, httpClient, nioSSL]
    ),
    Service(
        "evolution-worker", folder: "EvolutionWorker", library: "EvolutionWorker",
        dependencies: ["ImageSanitizer", "LanternDatabase", "LanternEvents", "LanternLLM", "LanternObjectStorage", "LanternRedis", "LanternRendering",
                       postgres, httpClient, nioPosix, metrics],
        testDependencies: ["ImageSanitizer", "LanternEvents", "LanternLLM", "LanternObjectStorage", "LanternRedis", "LanternRendering", postgres,
                           httpClient]
    ),
    Service(
        "gateway", folder: "Gateway", library: "GatewayService",
        dependencies: ["GatewayRouting", "LanternRedis", "LanternTokens", "LanternEvents", "SocketIOProtocol",
                       .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"), httpTypes, httpClient,
                       crypto, nioFoundation, metrics, tracing, .product(name: "NIOHTTP1", package: "swift-nio")],
        resources: [.copy("openapi.yaml"), .copy("Resources")],
        testDependencies: ["GatewayRouting", "LanternHTTP", "LanternEvents", "LanternRedis", nioPosix,
                           .product(name: "HummingbirdWSClient", package: "hummingbird-websocket")],
        testExclude: ["Clients"]
    ),
]

let package = Package(
    name: "Lantern",
    platforms: [.macOS(.v15)],
    products: services.map { .executable(name: $0.executable, targets: [$0.executable]) } + [
        .executable(name: "astrology-bench", targets: ["astrology-bench"]),
        .executable(name: "lantern-bench", targets: ["lantern-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // Tracing: W3C trace context through HTTP and the event bus, exported over OTLP/HTTP when configured (the
        // gRPC exporter's trait is off: it would bring gRPC into every executable for nothing).
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // The generated Swift client of the API (Clients/LanternClient), which the end-to-end tests drive.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
    ],
    targets: services.flatMap(\.targets) + [
        // MARK: Shared libraries
        .target(
            name: "LanternCore",
            dependencies: [logging, configuration, nioCore],
            path: "Shared/LanternCore",
            swiftSettings: strict
        ),
        .target(
            name: "LanternContracts",
            dependencies: ["LanternCore"],
            path: "Shared/LanternContracts",
            swiftSettings: strict
        ),
        .target(
            name: "LanternDatabase",
            dependencies: ["LanternCore", "LanternContracts", postgres, nioCore, lifecycle, logging, crypto],
            path: "Shared/LanternDatabase",
            swiftSettings: strict
        ),
        .systemLibrary(name: "CHiredis", path: "Shared/CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .target(
            name: "LanternRedis",
            dependencies: ["CHiredis", "LanternCore", crypto, nioCore, nioPosix, lifecycle, logging],
            path: "Shared/LanternRedis",
            swiftSettings: strict
        ),
        .target(
            name: "LanternEvents",
            dependencies: ["LanternContracts", "LanternCore", "LanternDatabase", "LanternRedis", postgres, lifecycle,
                           logging, metrics, tracing],
            path: "Shared/LanternEvents",
            swiftSettings: strict
        ),
        .target(
            name: "LanternTokens",
            dependencies: ["LanternContracts", "LanternCore", jwt, crypto, httpClient, logging, nioCore, nioFoundation],
            path: "Shared/LanternTokens",
            swiftSettings: strict
        ),
        .target(
            name: "LanternHTTP",
            dependencies: ["LanternContracts", "LanternCore", "LanternTokens", hummingbird, httpTypes, httpClient,
                           metrics, prometheus, lifecycle, logging, nioCore, nioPosix, nioFoundation, tracing, otel,
                           .product(name: "NIOHTTP1", package: "swift-nio")],
            path: "Shared/LanternHTTP",
            swiftSettings: strict
        ),

        .target(
            name: "LanternLLM",
            dependencies: ["LanternCore", "LanternRedis", httpClient, crypto, logging, metrics, nioCore, nioFoundation,
                           .product(name: "NIOHTTP1", package: "swift-nio")],
            path: "Shared/LanternLLM",
            swiftSettings: strict
        ),
        .target(
            name: "LanternAppStore",
            dependencies: ["LanternCore", jwt, crypto, .product(name: "X509", package: "swift-certificates"),
                           .product(name: "SwiftASN1", package: "swift-asn1")],
            path: "Shared/LanternAppStore",
            swiftSettings: strict
        ),
        // Rendering (report PDFs, share cards, pet images): Cairo, Pango and librsvg from Debian, one module for all.
        .systemLibrary(
            name: "CRendering",
            path: "Shared/CRendering",
            pkgConfig: "pangocairo librsvg-2.0",
            providers: [.apt(["libcairo2-dev", "libpango1.0-dev", "librsvg2-dev"])]
        ),
        .target(
            name: "LanternRendering",
            dependencies: ["CRendering", nioPosix],
            path: "Shared/LanternRendering",
            swiftSettings: strict
        ),
        // Object storage (a folder, or an S3-compatible bucket signed with SigV4 over async-http-client): Pairly's photos, Symbi's evolutions.
        .target(
            name: "LanternObjectStorage",
            dependencies: ["LanternCore", httpClient, crypto, nioCore, nioPosix, .product(name: "NIOHTTP1", package: "swift-nio")],
            path: "Shared/LanternObjectStorage",
            swiftSettings: strict
        ),
        .target(
            name: "LanternService",
            dependencies: ["LanternContracts", "LanternCore", "LanternDatabase", "LanternEvents", "LanternHTTP",
                           "LanternObjectStorage", "LanternRedis", "LanternTokens", nioCore, nioFoundation, hummingbird, .product(name: "HummingbirdCore", package: "hummingbird"),
                           postgres, .product(name: "_ConnectionPoolModule", package: "postgres-nio"), httpClient, lifecycle, logging, metrics],
            path: "Shared/LanternService",
            swiftSettings: strict
        ),

        // MARK: Parts of one service (the services themselves are `services` above)
        // content's apps (Services/Content/Sources/<App>): each its Routes, Domain, Store, Events, Catalogue and
        // Migrations, mounted by ContentService through ContentKit's `ContentApp`.
        .target(
            name: "ContentKit",
            dependencies: ["LanternAppStore", "LanternContracts", "LanternCore", "LanternDatabase", "LanternEvents", "LanternHTTP", "LanternLLM",
                           "LanternRedis", "LanternService", hummingbird, postgres, httpClient, logging],
            path: "Services/Content/Sources/ContentKit",
            swiftSettings: strict
        ),
        .target(
            name: "LuckyDayContent",
            dependencies: ["ContentKit", "LanternContracts", "LanternCore", "LanternDatabase", "LanternEvents", "LanternHTTP", "LanternLLM",
                           "LanternService", hummingbird, postgres, logging, metrics],
            path: "Services/Content/Sources/LuckyDay",
            resources: [.copy("Migrations"), .copy("Catalogue")],
            swiftSettings: strict
        ),
        .target(
            name: "AstroSvitlaContent",
            dependencies: ["ContentKit", "LanternAppStore", "LanternContracts", "LanternCore", "LanternDatabase", "LanternEvents", "LanternHTTP",
                           "LanternLLM", "LanternRendering", "LanternService", hummingbird, postgres, crypto, logging, metrics, nioCore,
                           nioFoundation],
            path: "Services/Content/Sources/AstroSvitla",
            resources: [.copy("Migrations"), .copy("Catalogue")],
            swiftSettings: strict
        ),
        .target(
            name: "RoastMeLaterContent",
            dependencies: ["ContentKit", "LanternContracts", "LanternCore", "LanternDatabase", "LanternEvents", "LanternHTTP", "LanternLLM",
                           "LanternRendering", "LanternService", "LanternTokens", hummingbird, postgres, logging, metrics],
            path: "Services/Content/Sources/RoastMeLater",
            resources: [.copy("Migrations"), .copy("Catalogue")],
            swiftSettings: strict
        ),
        // Image checks and metadata removal (JPEG, PNG, WebP, HEIC), no dependencies: media's photos, Symbi's
        // model-drawn evolutions.
        .target(name: "ImageSanitizer", path: "Shared/ImageSanitizer", swiftSettings: strict),
        .target(
            name: "MediaUpload",
            dependencies: ["LanternCore", nioCore],
            path: "Services/Media/Sources/MediaUpload",
            swiftSettings: strict
        ),
        .target(name: "SocketIOProtocol", dependencies: ["LanternCore"], path: "Services/Gateway/Sources/SocketIOProtocol", swiftSettings: strict),
        // The gateway's routing decisions from a request's path and method (canonical path, route table, 405 table):
        // no I/O, so the fuzzer takes them without the rest of the gateway.
        .target(name: "GatewayRouting", dependencies: ["LanternContracts", "LanternCore", httpTypes],
                path: "Services/Gateway/Sources/GatewayRouting", swiftSettings: strict),
        .testTarget(
            name: "ImageSanitizerTests",
            dependencies: ["ImageSanitizer", "LanternTestSupport"],
            path: "Tests/ImageSanitizerTests",
            resources: [.copy("Fixtures")],
            swiftSettings: strict
        ),
        // Astrology links the Swiss Ephemeris (AGPL-3.0): these targets, and only these, are under
        // Services/Astrology/LICENSE (a deployment test checks that nothing else depends on them).
        .systemLibrary(
            name: "CSwissEph",
            path: "Services/Astrology/Sources/CSwissEph",
            providers: [.apt(["libswe-dev"])]
        ),
        .target(
            name: "Ephemeris",
            dependencies: ["CSwissEph", nioPosix],
            path: "Services/Astrology/Sources/Ephemeris",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "astrology-bench",
            dependencies: ["AstrologyService", "Ephemeris"],
            path: "Services/Astrology/Sources/astrology-bench",
            swiftSettings: strict
        ),

        // MARK: Tools
        .executableTarget(
            name: "lantern-bench",
            dependencies: ["AstroSvitlaContent", "RoastMeLaterContent", "LanternAppStore", "LanternContracts", crypto, "LanternCore", "LanternEvents", "LanternLLM", "LanternRedis", "LanternTestSupport", "EvolutionWorker", "LanternRendering",
                           lifecycle, logging, httpClient, nioCore, nioFoundation, postgres,
                           .product(name: "NIOHTTP1", package: "swift-nio"),
                           hummingbird, .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/lantern-bench",
            swiftSettings: strict
        ),

        // The Swift client of the API for the iOS apps, generated by `make client` (its own package too:
        // Clients/LanternClient/Package.swift); here so the end-to-end tests use it.
        .target(
            name: "LanternClient",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                           .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"), httpTypes],
            path: "Clients/LanternClient/Sources/LanternClient"
        ),

        // The development App Store signer (`make up`, `make appstore-purchase`, `make demo`; the tests' TestAppStore):
        // never part of a deployment, and trusted by content only in development.
        .target(
            name: "DevAppStore",
            dependencies: ["LanternAppStore", crypto, .product(name: "X509", package: "swift-certificates"),
                           .product(name: "SwiftASN1", package: "swift-asn1")],
            path: "Tools/DevAppStore",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "lantern-dev-appstore",
            dependencies: ["DevAppStore", "LanternAppStore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/lantern-dev-appstore",
            swiftSettings: strict
        ),

        // The development identity provider (`make up`, `make token`): never part of a deployment.
        .target(
            name: "DevIdentity",
            dependencies: ["LanternContracts", "LanternCore", "LanternHTTP", hummingbird, crypto, jwt,
                           .product(name: "CryptoExtras", package: "swift-crypto")],
            path: "Tools/DevIdentity",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "lantern-dev-identity",
            dependencies: ["DevIdentity", "LanternCore", hummingbird, logging, nioCore, nioPosix,
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/lantern-dev-identity",
            swiftSettings: strict
        ),

        // MARK: Fuzzing (scripts/fuzz.sh builds lantern-fuzz with libFuzzer; the tests replay the saved inputs)
        .target(
            name: "FuzzChecks",
            dependencies: ["GatewayRouting", "ImageSanitizer", "MediaUpload", "SocketIOProtocol", "LanternContracts", "LanternCore", httpTypes, nioCore],
            path: "Tests/Fuzz/FuzzChecks",
            swiftSettings: strict
        ),
        .executableTarget(name: "lantern-fuzz", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/lantern-fuzz", swiftSettings: strict),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/FuzzRegressionTests", swiftSettings: strict),

        // MARK: Tests
        .target(
            name: "LanternTestSupport",
            dependencies: ["DevAppStore", "DevIdentity", "LanternAppStore", "LanternObjectStorage", "LanternContracts", "LanternCore", "LanternLLM", "LanternDatabase", "LanternRedis",
                           "LanternEvents", "LanternTokens", postgres, hummingbird, crypto, jwt,
                           .product(name: "CryptoExtras", package: "swift-crypto"), nioFoundation, httpClient,
                           lifecycle, logging, nioSSL, nioPosix, .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                           .product(name: "X509", package: "swift-certificates"),
                           .product(name: "SwiftASN1", package: "swift-asn1"), httpTypes],
            path: "Tests/LanternTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternCoreTests",
            dependencies: ["LanternCore"],
            path: "Tests/LanternCoreTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternContractsTests",
            dependencies: ["LanternContracts", "LanternCore"],
            path: "Tests/LanternContractsTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternEventsTests",
            dependencies: ["LanternEvents", "LanternContracts", "LanternTestSupport", postgres],
            path: "Tests/LanternEventsTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternHTTPTests",
            dependencies: ["LanternHTTP", "LanternCore", "LanternTokens", "LanternTestSupport", hummingbirdTesting,
                           hummingbird, otel, tracing, .product(name: "NIOHTTP1", package: "swift-nio")],
            path: "Tests/LanternHTTPTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternTokensTests",
            dependencies: ["LanternTokens", "LanternCore", "LanternContracts", "LanternTestSupport", jwt, httpClient],
            path: "Tests/LanternTokensTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternRedisTests",
            dependencies: ["LanternRedis", "LanternCore", "LanternTestSupport", nioCore, nioPosix],
            path: "Tests/LanternRedisTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternLLMTests",
            dependencies: ["LanternLLM", "LanternCore", "LanternRedis", "LanternTestSupport", httpClient],
            path: "Tests/LanternLLMTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternAppStoreTests",
            dependencies: ["LanternAppStore", "LanternCore", "LanternTestSupport", jwt, crypto],
            path: "Tests/LanternAppStoreTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternObjectStorageTests",
            dependencies: ["LanternObjectStorage", "LanternTestSupport", httpClient],
            path: "Tests/LanternObjectStorageTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternRenderingTests",
            dependencies: ["LanternRendering", "LanternTestSupport"],
            path: "Tests/LanternRenderingTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternServiceTests",
            dependencies: ["LanternService", "LanternContracts", "LanternCore", "LanternDatabase", "LanternEvents", "LanternRedis", "LanternTestSupport", "LanternTokens",
                           hummingbird, httpClient, nioCore, postgres, lifecycle, logging],
            path: "Tests/LanternServiceTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LanternDatabaseTests",
            dependencies: ["LanternDatabase", "LanternCore", "LanternTestSupport", postgres],
            path: "Tests/LanternDatabaseTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "DeploymentTests",
            dependencies: ["LanternContracts", "LanternCore", "LanternTestSupport"],
            path: "Tests/DeploymentTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "EndToEndTests",
            // AstroSvitlaContent: the rules coverage test runs content's matcher over charts from the real astrology.
            dependencies: ["AstroSvitlaContent", "DevAppStore", "DevIdentity", "LanternClient", .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"), "LanternAppStore", "LanternHTTP", "LanternTestSupport", "LanternContracts", "LanternEvents", httpClient, postgres, nioCore,
                           .product(name: "HummingbirdWSClient", package: "hummingbird-websocket")],
            path: "Tests/EndToEndTests",
            swiftSettings: strict
        ),
    ]
)
