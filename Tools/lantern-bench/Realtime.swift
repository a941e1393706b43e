import AsyncHTTPClient
import Foundation
import HummingbirdWSClient
import LanternCore
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Synchronization

/// Pairly through the running stack: upload → receiver's WebSocket latency at a fixed upload rate, then the
/// gateway's memory while it holds many idle WebSocket connections.
struct Realtime {
    var gateway: String
    var image: String
    var rate: Int
    var seconds: Int
    var idle: Int
    var gatewayPID: Int32

    func run() async throws {
        let logger = { var l = Logger(label: "bench"); l.logLevel = .error; return l }()
        let http = HTTPClient.shared
        let photo = Array(try Data(contentsOf: URL(fileURLWithPath: image)))
        let (rate, seconds, idle, gatewayPID) = (self.rate, self.seconds, self.idle, self.gatewayPID)

        let gateway = self.gateway
        @Sendable func call(_ method: HTTPMethod, _ path: String, token: String? = nil, json: String? = nil, body: [UInt8]? = nil, type: String = "application/json") async throws -> (Int, Data) {
            var request = HTTPClientRequest(url: gateway + path)
            request.method = method
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            if let json { request.headers.add(name: "Content-Type", value: type); request.body = .bytes(ByteBuffer(string: json)) }
            if let body { request.headers.add(name: "Content-Type", value: type); request.body = .bytes(ByteBuffer(bytes: body)) }
            let response = try await http.execute(request, timeout: .seconds(30))
            return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        @Sendable func field(_ data: Data, _ name: String) -> String? { (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?[name] as? String }
        func signIn() async throws -> String {
            let (status, data) = try await call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"pairly"}"#)
            guard status == 201, let token = field(data, "accessToken") else { throw BenchError("sign-in failed: \(status)") }
            return token
        }
        let sender = try await signIn(), receiver = try await signIn()
        let (_, invite) = try await call(.POST, "/v1/pairing/invites", token: sender)
        guard let code = field(invite, "code") else { throw BenchError("no invite code") }
        _ = try await call(.POST, "/v1/pairing/join", token: receiver, json: #"{"code":"\#(code)"}"#)
        // media hears of the pairing through the bus; wait until an upload is accepted.
        var ready = false
        for _ in 0..<200 where !ready {
            ready = try await call(.POST, "/v1/moments", token: sender, body: photo, type: "image/jpeg").0 == 201
            if !ready { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard ready else { throw BenchError("media never saw the pairing") }

        // Latency: the receiver's socket timestamps each new_moment; uploads record when they were sent.
        let sent = Locked<[String: ContinuousClock.Instant]>([:])
        let arrived = Locked<[String: ContinuousClock.Instant]>([:])
        let wsURL = gateway.replacingOccurrences(of: "http://", with: "ws://") + "/v1/realtime?access_token=\(receiver)"
        let total = rate * seconds
        let socket = Task { @Sendable in
            _ = try await WebSocketClient.connect(url: wsURL, logger: logger) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let text) = message, text.contains("new_moment"),
                          let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                          let data = object["data"] as? [String: Any], let id = data["momentId"] as? String else { continue }
                    let done = arrived.withLock { $0[id] = .now; return $0.count >= total }
                    if done { break }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let interval = Duration.nanoseconds(1_000_000_000 / rate)
        var next = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<total {
                next += interval
                group.addTask {
                    let started = ContinuousClock.now
                    let (status, data) = try await call(.POST, "/v1/moments", token: sender, body: photo, type: "image/jpeg")
                    guard status == 201, let id = field(data, "momentId") else { return }
                    sent.withLock { $0[id] = started }
                }
                try await Task.sleep(until: next, clock: .continuous)
            }
            try await group.waitForAll()
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while arrived.withLock({ $0.count }) < total, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        socket.cancel()
        let latencies = sent.withLock { s in arrived.withLock { a in s.compactMap { id, start in a[id].map { ($0 - start).inSeconds * 1000 } } } }.sorted()
        func percentile(_ p: Double) -> Double { latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        print(String(format: "realtime.upload_to_socket rate=%d/s uploads=%d delivered=%d p50=%.1fms p99=%.1fms max=%.1fms",
                     rate, total, latencies.count, percentile(0.5), percentile(0.99), latencies.last ?? .nan))

        // Idle connections: hold `idle` sockets open, then read the gateway's resident memory.
        guard idle > 0 else { return }
        let before = Memory.rss(pid: gatewayPID)
        let opened = Locked(0)
        let holders = Task { @Sendable in
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<idle {
                    group.addTask {
                        _ = try? await WebSocketClient.connect(url: wsURL, logger: logger) { inbound, _, _ in
                            opened.withLock { $0 += 1 }
                            for try await _ in inbound {}
                        }
                    }
                }
            }
        }
        let openDeadline = ContinuousClock.now + .seconds(120)
        while opened.withLock { $0 } < idle, ContinuousClock.now < openDeadline { try await Task.sleep(for: .milliseconds(200)) }
        try await Task.sleep(for: .seconds(3))
        let after = Memory.rss(pid: gatewayPID)
        print(String(format: "realtime.idle_sockets open=%d gateway_rss_before=%.1fMB gateway_rss_with_sockets=%.1fMB",
                     opened.withLock { $0 }, before, after))
        holders.cancel()
    }
}

/// A value behind a lock that closures can share.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
