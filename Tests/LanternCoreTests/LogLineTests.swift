import Foundation
import LanternCore
import Logging
import Synchronization
import Testing

@Suite("Log lines")
struct LogLineTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test("one line per entry: level, label, message, then metadata sorted, quoted where it would not split back")
    func format() throws {
        let lines = Lines()
        var logger = Logger(label: "gateway") { label in LogLine(label: label, write: { lines.append($0) }) }
        logger.logLevel = .info
        logger[metadataKey: "request_id"] = "abc-1"
        logger[metadataKey: "path"] = "/v1/me"
        logger.debug("not written")
        logger.warning("upstream failed", metadata: ["error": "connection refused", "request_id": "override"])
        let written = lines.all
        try #require(written.count == 1)
        let line = written[0]
        #expect(line.hasSuffix(" warning gateway: upstream failed error=\"connection refused\" path=/v1/me request_id=override\n"))
        #expect(line.first?.isNumber == true, "starts with the ISO 8601 time")
    }

    @Test("quotes, backslashes and newlines in values are escaped")
    func quoting() {
        #expect(LogLine.quoted("plain") == "plain")
        #expect(LogLine.quoted("") == "\"\"")
        #expect(LogLine.quoted("a=b") == "\"a=b\"")
        #expect(LogLine.quoted("say \"hi\"\nnow") == "\"say \\\"hi\\\"\\nnow\"")
    }

    @Test("LOG_FORMAT=json: one JSON object per line that a JSON parser reads back, metadata as fields, hostile text escaped")
    func json() throws {
        let lines = Lines()
        var logger = Logger(label: "media") { label in LogLine(label: label, format: .json, write: { lines.append($0) }) }
        logger[metadataKey: "request_id"] = "abc-1"
        logger.error("upload \"refused\"\n", metadata: ["error": "bad\u{1}bytes\\", "sizes": .array(["1", "2"]), "level": "spoofed"])
        let line = try #require(lines.all.first)
        #expect(line.hasSuffix("}\n") && !line.dropLast().contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "error" && object["logger"] as? String == "media")
        #expect(object["message"] as? String == "upload \"refused\"\n")
        #expect(object["error"] as? String == "bad\u{1}bytes\\" && object["request_id"] as? String == "abc-1")
        #expect(object["sizes"] as? [String] == ["1", "2"])
        #expect((object["time"] as? String)?.first?.isNumber == true)
    }
}
