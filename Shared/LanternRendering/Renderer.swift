import NIOPosix

/// Where rendering runs: NIO's blocking thread pool, never the event loops or Swift's cooperative threads (a page
/// of text layout is milliseconds of CPU that must not stall requests).
public enum Renderer {
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }
}
