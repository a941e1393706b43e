@testable import GatewayService
import Foundation
import NIOCore
import LanternTestSupport
import NIOPosix
import Synchronization
import Testing

/// A TCP connection to the gateway that sends raw bytes and collects everything that comes back until the gateway
/// closes it (or `wait` runs out).
final class RawConnection: Sendable {
    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let text = Mutex("")
        let closed: EventLoopPromise<String>
        init(closed: EventLoopPromise<String>) { self.closed = closed }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let chunk = String(buffer: unwrapInboundIn(data))
            text.withLock { $0 += chunk }
        }
        func channelInactive(context: ChannelHandlerContext) { closed.succeed(text.withLock { $0 }) }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }

    let channel: any Channel
    let closed: EventLoopFuture<String>
    let collector: Collector

    init(port: Int) async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = loop.makePromise(of: String.self)
        let collector = Collector(closed: promise)
        self.collector = collector
        do {
            channel = try await ClientBootstrap(group: loop)
                .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) } }
                .connect(host: "127.0.0.1", port: port).get()
        } catch {
            promise.fail(error)  // nothing will close what never opened
            throw error
        }
        closed = promise.futureResult
    }

    func send(_ text: String) async throws { try await channel.writeAndFlush(ByteBuffer(string: text)) }
    func send(_ bytes: [UInt8]) async throws { try await channel.writeAndFlush(ByteBuffer(bytes: bytes)) }

    /// The answer's head (through the blank line) as soon as it is complete, open connection or not.
    func answerHead(within seconds: Int = 30) async throws -> String? {
        for _ in 0..<(seconds * 20) {
            let text = collector.text.withLock { $0 }
            if let end = text.range(of: "\r\n\r\n") { return String(text[..<end.upperBound]) }
            if !channel.isActive { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// Everything received once `count` complete answers (each with `Content-Length`) are in; nil after `seconds`.
    func answers(_ count: Int, within seconds: Int = 30) async throws -> String? {
        for _ in 0..<(seconds * 20) {
            let text = collector.text.withLock { $0 }
            if Self.completeAnswers(in: text) >= count { return text }
            if !channel.isActive { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    static func completeAnswers(in text: String) -> Int {
        var rest = Substring(text)
        var count = 0
        while let end = rest.range(of: "\r\n\r\n") {
            let head = rest[..<end.lowerBound]
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let body = rest[end.upperBound...]
            guard body.utf8.count >= length else { break }
            count += 1
            rest = Substring(body.utf8.dropFirst(length)) ?? ""
        }
        return count
    }

    /// What came back, once the gateway closed the connection; nil if it is still open after `seconds`.
    func closedAnswer(within seconds: Int64 = 30) async throws -> String? {
        let loop = channel.eventLoop
        let outcome = loop.makePromise(of: String?.self)
        let timer = loop.scheduleTask(in: .seconds(seconds)) { outcome.succeed(nil) }
        closed.whenComplete { result in
            timer.cancel()
            outcome.succeed(try? result.get())
        }
        let answer = try await outcome.futureResult.get()
        if answer == nil { try? await channel.close() }
        return answer
    }
}
