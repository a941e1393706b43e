import Foundation
import Hummingbird
import LanternTestSupport
import Testing

extension EndToEnd {
    /// The journeys that share one stack: booted once for all of them (`SharedStack`), each isolated by its own
    /// accounts (a fresh device id per user), never by a stack of its own. A suite that needs the stack configured
    /// otherwise (the development kit: development mode, time travel, span export) stays beside this one.
    @Suite(.serialized, .sharedStack) enum Shared {}
}

extension Stack {
    /// The stack the running suite of `EndToEnd.Shared` shares.
    @TaskLocal static var current: Stack?

    /// `body` on the shared stack; only inside `EndToEnd.Shared`.
    static func shared(_ body: @Sendable (Stack) async throws -> Void) async throws {
        let stack = try #require(current, "Stack.shared is for suites inside EndToEnd.Shared")
        try await body(stack)
    }
}

/// Boots the shared stack once around every suite of `EndToEnd.Shared` (a suite trait that is not recursive: one
/// scope for the whole suite), configured for all of them:
/// - `astrology` with the gazetteer (place search, charts by place id);
/// - content's Lucky Day tasks on fake Gemini models of this process (`profile` on `gemini-2.5-flash`, `fortune` on
///   `gemini-2.5-flash-lite`, so a journey scripts each without racing the other), AstroSvitla's reports on the
///   local generator as a stack with no key runs them;
/// - content trusting a test App Store's root (`Stack.appStore`) for `app.lantern.astrosvitla` (in development: only
///   there may `APPSTORE_ROOT_CERTIFICATES` be set);
/// - identity with Google and Apple sign-in configured and their key sets empty and local (a made-up ID token is a
///   401, not a 503 for a provider that is not set up);
/// - sign-in limited per client address as in production but for the one address every journey shares.
struct SharedStack: SuiteTrait, TestScoping {
    static let bundle = "app.lantern.astrosvitla"
    /// RoastMeLater's operator key in the shared stack (`ROASTMELATER_OPERATOR_KEYS`).
    static let operatorKey = "e2e-operator-key-0123456789abcdef0123"

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let llm = FakeLLMServers()
        let appStore = try TestAppStore()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-appstore-\(UUID().uuidString).pem")
        try appStore.rootPEM.write(to: root, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: root) }
        let keys = Router()
        keys.get("/keys") { _, _ in Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: #"{"keys":[]}"#))) }
        try await LoopbackServer.run(router: keys) { port in
            let identity = ["GOOGLE_CLIENT_IDS": "e2e.apps.googleusercontent.com", "GOOGLE_JWKS_URL": "http://127.0.0.1:\(port)/keys",
                            "APPLE_CLIENT_IDS": "app.lantern.e2e", "APPLE_JWKS_URL": "http://127.0.0.1:\(port)/keys",
                            // Local key sets over plain HTTP are a development setting.
                            "LANTERN_ENVIRONMENT": "development"]
            let content = ["LLM_MODELS": "local", "LLM_MODELS_PROFILE": "gemini:gemini-2.5-flash", "LLM_MODELS_FORTUNE": "gemini:gemini-2.5-flash-lite",
                           "APPSTORE_ROOT_CERTIFICATES": root.path, "ASTROSVITLA_BUNDLE_ID": Self.bundle,
                           "ROASTMELATER_OPERATOR_KEYS": "e2e-operator:\(Self.operatorKey)",
                           // Trusting a root other than Apple's is a development setting (AppStoreConfiguration).
                           "LANTERN_ENVIRONMENT": "development"]
            try await Stack.run(places: true, llm: llm, content: content,
                                environment: ["identity": identity, "gateway": ["RATE_LIMIT_SIGNIN_PER_MINUTE": "600",
                                                                                    "RATE_LIMIT_DEVICE_SIGNIN_PER_DAY": "100000"]]) { stack in
                stack.llm = llm
                stack.appStore = appStore
                try await Stack.$current.withValue(stack) { try await function() }
            }
        }
    }
}

extension Trait where Self == SharedStack {
    /// One stack for every suite inside (see `SharedStack`).
    static var sharedStack: Self { Self() }
}
