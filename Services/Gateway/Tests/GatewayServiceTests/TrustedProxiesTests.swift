import Foundation
@testable import GatewayService
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LanternCore
import LanternTestSupport
import NIOCore
import NIOFoundationCompat
import Testing

@Suite("Trusted proxies and the client address")
struct TrustedProxiesTests {
    @Test("addresses and CIDR ranges, IPv4 and IPv6; an IPv4-mapped IPv6 peer is its IPv4 address")
    func ranges() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "192.168.1.7", "fd00::/8", "2001:db8::1"])
        for inside in ["10.0.0.1", "10.255.255.255", "192.168.1.7", "fd12:3456::1", "2001:db8::1", "::ffff:10.1.2.3"] {
            #expect(proxies.contains(inside), "\(inside)")
        }
        for outside in ["11.0.0.1", "192.168.1.8", "fe80::1", "2001:db8::2", "::ffff:11.1.2.3", "unknown", "", "10.0.0.1.5"] {
            #expect(!proxies.contains(outside), "\(outside)")
        }
        #expect(try TrustedProxies(["0.0.0.0/0"]).contains("203.0.113.9"))
        #expect(try TrustedProxies(["172.16.0.0/12"]).contains("172.31.255.1") && !(try TrustedProxies(["172.16.0.0/12"]).contains("172.32.0.1")))
        #expect(!TrustedProxies.none.contains("127.0.0.1"))
        for bad in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/", "10.0.0/8", "proxy.internal", "10.0.0.0/8/8", "10.0.0.0/-1", "::/x"] {
            #expect(throws: TrustedProxies.InvalidEntry.self, "\(bad)") { try TrustedProxies([bad]) }
        }
    }

    @Test("the client is the rightmost X-Forwarded-For entry that is not a trusted proxy; from anyone else, the peer")
    func clientAddress() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8"])
        // Not from a proxy: whatever the header says, the peer.
        #expect(proxies.clientAddress(peer: "203.0.113.9", forwardedFor: ["1.2.3.4"]) == "203.0.113.9")
        // One proxy: the entry it appended.
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        // The client wrote its own entries first; the proxy appended the real one.
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["1.1.1.1, 2.2.2.2, 203.0.113.9"]) == "203.0.113.9")
        // Two proxies (an ingress behind a load balancer), in one field or two.
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["6.6.6.6, 203.0.113.9, 10.0.0.3"]) == "203.0.113.9")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["6.6.6.6, 203.0.113.9", "10.0.0.3"]) == "203.0.113.9")
        // Nothing forwarded, or every hop a proxy: the leftmost proxy.
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: []) == "10.0.0.2")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["10.0.0.9"]) == "10.0.0.9")
        // Garbage ends the walk at the last proxy: it is never taken as an address.
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["203.0.113.9, <script>, 10.0.0.3"]) == "10.0.0.3")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["unknown"]) == "10.0.0.2")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["  2001:db8::5 "]) == "2001:db8::5")
    }

    @Test("TRUST_FORWARDED_FOR is refused naming its replacement; a bad TRUSTED_PROXIES entry is named")
    func configuration() {
        #expect {
            _ = try GatewayConfiguration(settings: .fixed(["TRUST_FORWARDED_FOR": "true"]))
        } throws: { ($0 as? ConfigurationError)?.variable == "TRUST_FORWARDED_FOR" && "\($0)".contains("TRUSTED_PROXIES") }
        #expect {
            _ = try GatewayConfiguration(settings: .fixed(["TRUSTED_PROXIES": "10.0.0.0/8, lb.internal"]))
        } throws: { ($0 as? ConfigurationError)?.variable == "TRUSTED_PROXIES" && "\($0)".contains("lb.internal") }
    }

    /// Signs in once with `forwardedFor` through a live gateway; the status and the X-Forwarded-For identity heard.
    func signIn(_ client: some TestClientProtocol, forwardedFor: String?) async throws -> (status: Int, heard: String?) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let forwardedFor { headers[.init("X-Forwarded-For")!] = forwardedFor }
        let response = try await client.execute(uri: "/v1/auth/device", method: .post, headers: headers, body: ByteBuffer(string: "{}"))
        let heard = response.status == .created ? try JSONDecoder().decode(Echo.self, from: Data(buffer: response.body)).headers["x-forwarded-for"] : nil
        return (Int(response.status.code), heard)
    }

    @Test("without trusted proxies a client cannot pick its address: X-Forwarded-For is ignored for limits and not passed on")
    func spoofingIgnored() async throws {
        try await withTestGateway(.live, ["RATE_LIMIT_SIGNIN_PER_MINUTE": "2"]) { client, _, _ in
            var statuses: [Int] = []
            for n in 1...4 {
                let (status, heard) = try await signIn(client, forwardedFor: "198.51.100.\(n)")
                statuses.append(status)
                if let heard { #expect(heard == "127.0.0.1", "the services heard \(heard)") }
            }
            #expect(statuses == [201, 201, 429, 429])
        }
    }

    @Test("behind a trusted proxy each client has its own limit, client-written entries change nothing, and the chain goes on")
    func behindProxy() async throws {
        try await withTestGateway(.live, ["RATE_LIMIT_SIGNIN_PER_MINUTE": "2", "TRUSTED_PROXIES": "127.0.0.0/8"]) { client, _, _ in
            let first = try await signIn(client, forwardedFor: "203.0.113.9")
            #expect(first.status == 201 && first.heard == "203.0.113.9, 127.0.0.1")
            // Same client, spoofing what it can (entries left of the proxy's): still the same bucket.
            #expect(try await signIn(client, forwardedFor: "1.1.1.1, 203.0.113.9").status == 201)
            #expect(try await signIn(client, forwardedFor: "2.2.2.2, 203.0.113.9").status == 429)
            // Another client behind the same proxy is not limited by the first.
            #expect(try await signIn(client, forwardedFor: "203.0.113.10").status == 201)
        }
    }
}
