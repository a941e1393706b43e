import Foundation
import LanternTestSupport
import Testing

/// The API document is what app developers read (`/docs`) and what the Swift client is generated from.
@Suite("The API document and its Swift client")
struct APIDocumentTests {
    static func run(_ arguments: String...) async throws -> ChildProcess.Output {
        try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), arguments)
    }

    @Test("every operation has examples that validate against their schemas (JSON Schema 2020-12), and operation ids are unique")
    func examples() async throws {
        let output = try await Self.run("python3", ServiceList.root.appendingPathComponent("scripts/openapi-check.py").path)
        #expect(output.status == 0, "\(String(decoding: output.stdout, as: UTF8.self))\(output.stderr)")
    }

    @Test("the committed Swift client was generated from the current document (make client)")
    func clientCurrent() async throws {
        let output = try await Self.run("bash", ServiceList.root.appendingPathComponent("scripts/openapi-client.sh").path, "--check")
        #expect(output.status == 0, "\(output.stderr)")
    }
}
