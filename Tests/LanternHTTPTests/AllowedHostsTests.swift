import Foundation
import Hummingbird
import HummingbirdTesting
import LanternCore
import LanternHTTP
import LanternTestSupport
import NIOCore
import Testing

/// A router of the shared kind with the Host check in front of `GET /hello`.
private func hostRouter(_ hosts: AllowedHosts) -> Router<LanternRequestContext> {
    let router = ServiceRouter.make()
    router.add(middleware: AllowedHostsMiddleware(hosts))
    router.get("/hello") { _, _ -> String in "hello" }
    return router
}

/// `GET path` on 127.0.0.1:`port` saying `Host: host` as written (curl sends it as given; nil: no Host header at all).
private func get(_ port: Int, _ path: String = "/hello", host: String?) async throws -> (status: Int, body: String) {
    // `Host:` with no value makes curl leave the header out.
    let header = host.map { "Host: \($0)" } ?? "Host:"
    let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                            ["-s", "--max-time", "10", "-H", header, "-w", "\n%{http_code}", "http://127.0.0.1:\(port)\(path)"])
    let text = String(decoding: output.stdout, as: UTF8.self)
    guard let newline = text.lastIndex(of: "\n") else { return (0, text) }
    return (Int(text[text.index(after: newline)...]) ?? 0, String(text[..<newline]))
}

/// The configuration error `body` stopped with (nil when it did not throw one).
private func configurationError(_ body: () throws -> Void) -> ConfigurationError? {
    do {
        try body()
        return nil
    } catch let error as ConfigurationError {
        return error
    } catch {
        Issue.record("not a ConfigurationError: \(error)")
        return nil
    }
}

@Suite("LanternHTTP: AllowedHosts, the Host check against DNS rebinding (issue #23 item 4)")
struct AllowedHostsTests {
    @Test("own names pass with and without a port, in any case, IPv6 in brackets; evil.example, a bare IPv6 address and malformed Hosts do not")
    func matching() throws {
        let hosts = try AllowedHosts()
        #expect(hosts.names == AllowedHosts.loopback && hosts == AllowedHosts.local)
        for host in ["localhost", "localhost:8080", "LOCALHOST:8080", "LocalHost", "localhost.", "localhost.:8080", "127.0.0.1", "127.0.0.1:9080",
                     "[::1]", "[::1]:8080", " localhost:8080 "] {
            #expect(hosts.allows(host), "\(host)")
        }
        for host in ["evil.example", "evil.example:8080", "EVIL.example", "localhost.evil.example", "127.0.0.1.evil.example", "::1", "[::1",
                     "[::1]x", "[::1]:http", "localhost:http", "localhost:80:80", "user@localhost", "localhost/x", "", "[]", "127.0.0.2"] {
            #expect(!hosts.allows(host), "\(host)")
        }
        // Every Host a request says must be a name of the listener, and it must say one.
        #expect(hosts.admits(["localhost:8080"]))
        #expect(!hosts.admits(["localhost:8080", "evil.example"]))
        #expect(!hosts.admits([]))
        let refusal = hosts.refusal(["localhost", "evil.example:8080"])
        #expect(refusal.status == 421 && refusal.code == "http_421")
        #expect(refusal.detail?.contains("Host header 'evil.example:8080'") == true, "\(refusal.detail ?? "")")
        #expect(hosts.refusal([]).detail?.contains("without a Host header") == true)
    }

    @Test("HTTP_HOST and ALLOWED_HOSTS add names (a bare IPv6 address gets its brackets); an every-interface bind adds none; an entry with a port, scheme or path stops the start naming ALLOWED_HOSTS")
    func names() throws {
        #expect(try AllowedHosts(host: "0.0.0.0").names == AllowedHosts.loopback)
        #expect(try AllowedHosts(host: "::").names == AllowedHosts.loopback)
        #expect(try AllowedHosts(host: "MyBox.local").allows("mybox.local:8080"))
        let listed = try AllowedHosts(extra: ["192.168.1.20", "Dev.Example.Test", "fe80::1", "[fd00::2]"])
        for host in ["192.168.1.20:8080", "dev.example.test", "DEV.EXAMPLE.TEST:443", "[fe80::1]:8080", "[FD00::2]", "localhost:8080"] {
            #expect(listed.allows(host), "\(host)")
        }
        #expect(!listed.allows("192.168.1.21:8080") && !listed.allows("evil.example"))
        for entry in ["192.168.1.20:8080", "http://mybox.local", "mybox.local/x", "*", "[fe80::1]:8080", "user@mybox.local"] {
            let error = configurationError { _ = try AllowedHosts(extra: [entry]) }
            #expect(error?.variable == "ALLOWED_HOSTS", "\(entry): \(String(describing: error))")
        }
    }

    @Test("checked in development and wherever ALLOWED_HOSTS is set; outside development without it any Host is accepted")
    func whenChecked() throws {
        func configured(_ variables: [String: String]) throws -> AllowedHosts? {
            let settings = Settings.fixed(variables)
            return try ProcessSettings(serviceName: "test", settings: settings, defaultPort: 1).apiHosts
        }
        #expect(try configured([:]) == nil)
        #expect(try configured(["LANTERN_ENVIRONMENT": "production"]) == nil)
        #expect(try configured(["LANTERN_ENVIRONMENT": "development"])?.names == AllowedHosts.loopback)
        #expect(try configured(["LANTERN_ENVIRONMENT": "development", "HTTP_HOST": "mybox.local", "ALLOWED_HOSTS": "192.168.1.20"])?.names
                == AllowedHosts.loopback.union(["mybox.local", "192.168.1.20"]))
        #expect(try configured(["ALLOWED_HOSTS": "api.lantern.example"])?.allows("api.lantern.example") == true)
        let error = configurationError { _ = try configured(["LANTERN_ENVIRONMENT": "development", "ALLOWED_HOSTS": "https://api.lantern.example"]) }
        #expect(error?.variable == "ALLOWED_HOSTS")
    }

    @Test("a router with the middleware answers its own names with and without a port (IPv6 literal, any case) and gives evil.example a 421 problem naming Host")
    func middleware() async throws {
        let hosts = try AllowedHosts(extra: ["dev.example.test"])
        try await LoopbackServer.run(router: hostRouter(hosts)) { port in
            for host in ["localhost", "localhost:\(port)", "127.0.0.1", "127.0.0.1:\(port)", "[::1]", "[::1]:\(port)", "LOCALHOST:\(port)",
                         "Dev.Example.Test:\(port)"] {
                let answer = try await get(port, host: host)
                #expect(answer.status == 200 && answer.body == "hello", "\(host): \(answer)")
            }
            for host in ["evil.example", "evil.example:\(port)", "Evil.Example", "localhost.evil.example", "::1"] {
                let answer = try await get(port, host: host)
                #expect(answer.status == 421, "\(host): \(answer)")
                let problem = try JSONDecoder().decode(Problem.self, from: Data(answer.body.utf8))
                #expect(problem.status == 421 && problem.code == "http_421" && problem.detail?.contains("Host") == true, "\(host): \(answer.body)")
            }
            // Any path, not only the routes: a 404 would tell the page that something answers there.
            #expect(try await get(port, "/nope", host: "evil.example").status == 421)
            #expect(try await get(port, "/nope", host: "localhost:\(port)").status == 404)
            // No Host header at all names no listener either.
            #expect(try await get(port, host: nil).status == 421)
        }
        // HummingbirdTesting's client says `localhost`: router tests keep passing behind the check.
        try await Application(router: hostRouter(hosts), logger: TestEnvironment.logger).test(.router) { client in
            let response = try await client.execute(uri: "/hello", method: .get)
            #expect(response.status == .ok && String(buffer: response.body) == "hello")
        }
    }
}
