import Foundation
@testable import LanternCore
import Testing

@Suite("LanternCore: the Host check's quick reading agrees with the general one (#45)")
struct AllowedHostsReadingTests {
    @Test("every Host the quick reading takes gives the name the general reading gives; what it leaves is left to the general one")
    func quickReadingAgrees() {
        var samples = ["localhost", "localhost:8080", "127.0.0.1:9080", "gateway", "identity:8081", "api.lantern.example",
                       "a_b-c.d:1", "localhost.", "localhost:", "LOCALHOST", "[::1]:80", " localhost", "localhost:80:80", "",
                       ":80", "évil.example", "localhost:8o", "x..", "."]
        // Random strings over the bytes that matter to either reading.
        let alphabet = Array("az09.-_:[]AZ é/@")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...12, using: &generator)
            samples.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for sample in samples {
            guard let quick = AllowedHosts.plainName(sample) else { continue }
            #expect(AllowedHosts.split(sample)?.name == quick, "'\(sample)'")
        }
        #expect(AllowedHosts.plainName("localhost:8080") == "localhost")
        #expect(AllowedHosts.plainName("LOCALHOST") == nil && AllowedHosts.plainName("localhost.") == nil)
        #expect(AllowedHosts.plainName("localhost:") == nil && AllowedHosts.plainName("") == nil)
    }
}
