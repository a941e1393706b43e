import Foundation
import LanternCore

/// How a service verifies App Store signed data (docs/configuration.md):
/// - `APPSTORE_ROOT_CERTIFICATES`: comma-separated PEM or DER files of the roots to trust; unset = Apple Root CA – G3
///   as pinned in the binary. Xcode's StoreKit testing certificate goes here for local testing — only with
///   `LANTERN_ENVIRONMENT=development`: anywhere else setting it stops the start, so no deployment can be made to
///   trust a signer other than Apple (issue #23 item 4).
/// - `APPSTORE_ENVIRONMENTS`: accepted environments, default `Production,Sandbox` (App Review buys in the sandbox
///   against the production server). With `Production` listed, `Xcode` and `LocalTesting` are refused; they are
///   refused outside development too (signed on a developer's machine, never by Apple).
/// - `APPSTORE_MAX_AGE_DAYS`: how old a transaction's `signedDate` may be (default 30).
/// - `APPSTORE_APP_APPLE_ID`: the app's Apple ID in App Store Connect; production notifications must name it.
public struct AppStoreConfiguration: Sendable {
    public var rootCertificates: [Data]
    public var environments: Set<AppStoreEnvironment>
    public var maximumAge: TimeInterval
    public var appAppleId: Int64?

    public init(settings: Settings) throws {
        // What only a developer's machine may trust, as identity refuses its development key sets elsewhere.
        let development = try ProcessSettings.Environment(settings: settings) == .development
        let files = settings.list("appstore.root.certificates")
        if !files.isEmpty && !development {
            throw ConfigurationError(variable: "APPSTORE_ROOT_CERTIFICATES",
                                     message: "may only be set with LANTERN_ENVIRONMENT=development (a deployment trusts Apple Root CA – G3 alone, pinned in the binary)")
        }
        if files.isEmpty {
            rootCertificates = [AppleRootCertificates.rootCAG3]
        } else {
            rootCertificates = try files.map { path in
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ConfigurationError(variable: "APPSTORE_ROOT_CERTIFICATES", message: "cannot read '\(path)'")
                }
                return try Self.der(data, path: path)
            }
        }
        var environments = Set<AppStoreEnvironment>()
        for name in settings.list("appstore.environments").isEmpty ? ["Production", "Sandbox"] : settings.list("appstore.environments") {
            guard let environment = AppStoreEnvironment(rawValue: name) else {
                throw ConfigurationError(variable: "APPSTORE_ENVIRONMENTS",
                                         message: "'\(name)' is not one of \(AppStoreEnvironment.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            environments.insert(environment)
        }
        if !development, let local = environments.filter(\.isLocal).map(\.rawValue).sorted().first {
            throw ConfigurationError(variable: "APPSTORE_ENVIRONMENTS",
                                     message: "may list \(local) only with LANTERN_ENVIRONMENT=development (Xcode and LocalTesting are signed on a developer's machine, never by Apple)")
        }
        if environments.contains(.production), environments.contains(where: \.isLocal) {
            throw ConfigurationError(variable: "APPSTORE_ENVIRONMENTS", message: "Xcode and LocalTesting cannot be accepted next to Production")
        }
        self.environments = environments
        maximumAge = Double(try settings.int("appstore.max.age.days", default: 30, range: 1...3650)) * 86_400
        if let text = settings.string("appstore.app.apple.id") {
            guard let id = Int64(text), id > 0 else {
                throw ConfigurationError(variable: "APPSTORE_APP_APPLE_ID", message: "must be the app's numeric Apple ID, got '\(text)'")
            }
            appAppleId = id
        }
    }

    /// A certificate file's DER: PEM (`-----BEGIN CERTIFICATE-----`) is decoded, anything else is taken as DER.
    static func der(_ data: Data, path: String) throws -> Data {
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains("-----BEGIN CERTIFICATE-----") else { return data }
        let body = text.components(separatedBy: "-----BEGIN CERTIFICATE-----")[1].components(separatedBy: "-----END CERTIFICATE-----")[0]
        guard let der = Data(base64Encoded: body.filter { !$0.isWhitespace }) else {
            throw ConfigurationError(variable: "APPSTORE_ROOT_CERTIFICATES", message: "'\(path)' is not a readable PEM certificate")
        }
        return der
    }

    public func verifier(bundleId: String, clock: WallClock) throws -> SignedDataVerifier {
        do {
            return try SignedDataVerifier(rootCertificates: rootCertificates, bundleId: bundleId, appAppleId: appAppleId, environments: environments,
                                          maximumAge: maximumAge, clock: clock)
        } catch {
            throw ConfigurationError(variable: "APPSTORE_ROOT_CERTIFICATES", message: "not usable as root certificates: \(error)")
        }
    }
}
