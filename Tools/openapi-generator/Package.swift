// swift-tools-version: 6.2
import PackageDescription

/// Only the code generator of swift-openapi-generator, pinned, for `make client` (scripts/openapi-client.sh): the
/// Swift client of the API is generated once and committed, so no build of Lantern pays for the generator.
let package = Package(
    name: "openapi-generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3"),
    ]
)
