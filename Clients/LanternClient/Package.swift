// swift-tools-version: 6.0
import PackageDescription

/// The Swift client of the Lantern API, generated from docs/api/openapi.yaml by swift-openapi-generator
/// (`make client`), for the iOS apps: AstroSvitla, Lucky Day, RoastMeLater. Add this folder as a package and create a
/// `Client(serverURL:transport: URLSessionTransport(), middlewares: [BearerToken { … }])`.
let package = Package(
    name: "LanternClient",
    platforms: [.iOS(.v16), .macOS(.v13)],
    products: [.library(name: "LanternClient", targets: ["LanternClient"])],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "LanternClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/LanternClient"
        ),
    ]
)
