import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@Suite("natal chart as SVG")
struct ChartSVGTests {
    final class Counter: NSObject, XMLParserDelegate {
        var elements: [String: Int] = [:]
        var classes: [String: Int] = [:]
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            elements[name, default: 0] += 1
            if let c = attributes["class"] { classes[c, default: 0] += 1 }
        }
    }

    @Test("a well-formed SVG with 12 signs, 10 planets, 12 cusps, an Ascendant and an MC, in both themes", arguments: ["light", "dark"])
    func svg(theme: String) async throws {
        try await AstrologyHarness.run { h in
            let response = try await h.client.execute(
                uri: "/v1/astrology/charts/natal.svg?theme=\(theme)", method: .post,
                headers: [.authorization: "Bearer \(h.token)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"date":"1990-04-15","time":"14:30","place":{"latitude":50.4501,"longitude":30.5234,"timeZone":"Europe/Kyiv"}}"#))
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("image/svg+xml") == true)
            let data = Data(buffer: response.body)
            let counter = Counter()
            let parser = XMLParser(data: data)
            parser.delegate = counter
            #expect(parser.parse(), "not well-formed: \(parser.parserError.map { "\($0)" } ?? "")")
            #expect(counter.elements["svg"] == 1)
            #expect(counter.classes["sign"] == 12 && counter.classes["planet"] == 10 && counter.classes["cusp"] == 12)
            #expect(counter.classes["asc"] == 1 && counter.classes["mc"] == 1)
            let text = String(decoding: data, as: UTF8.self)
            #expect(text.contains(theme == "dark" ? "#14121f" : "#ffffff"))
            // Kept for a look (rsvg-convert it to PNG); not part of the check.
            try? data.write(to: FileManager.default.temporaryDirectory.appendingPathComponent("lantern-natal-\(theme).svg"))
        }
    }

    @Test("an unknown theme is a 422 naming it")
    func badTheme() async throws {
        try await AstrologyHarness.run { h in
            let response = try await h.client.execute(
                uri: "/v1/astrology/charts/natal.svg?theme=neon", method: .post,
                headers: [.authorization: "Bearer \(h.token)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"date":"1990-04-15","time":"14:30","place":{"latitude":50.45,"longitude":30.52,"timeZone":"Europe/Kyiv"}}"#))
            #expect(response.status == .unprocessableContent && response.invalidFields == ["theme"])
        }
    }

    @Test("?fingerprint= draws only the chart of that fingerprint: another birth's is 409 fingerprint_mismatch, a malformed one a 422 naming it")
    func fingerprint() async throws {
        try await AstrologyHarness.run { h in
            let birth = #"{"date":"1990-04-15","time":"14:30","place":{"latitude":50.4501,"longitude":30.5234,"timeZone":"Europe/Kyiv"}}"#
            let headers: HTTPFields = [.authorization: "Bearer \(h.token)", .contentType: "application/json"]
            let chart = try await h.client.execute(uri: "/v1/astrology/charts/natal", method: .post, headers: headers, body: ByteBuffer(string: birth))
            struct Fingerprinted: Decodable { var fingerprint: String }
            let fingerprint = try JSONDecoder().decode(Fingerprinted.self, from: chart.body).fingerprint
            let same = try await h.client.execute(uri: "/v1/astrology/charts/natal.svg?fingerprint=\(fingerprint)", method: .post, headers: headers,
                                                  body: ByteBuffer(string: birth))
            #expect(same.status == .ok && same.headers[.contentType]?.hasPrefix("image/svg+xml") == true)
            let other = try await h.client.execute(uri: "/v1/astrology/charts/natal.svg?fingerprint=\(fingerprint)", method: .post, headers: headers,
                                                   body: ByteBuffer(string: birth.replacingOccurrences(of: "14:30", with: "14:31")))
            #expect(other.status == .conflict)
            #expect(String(buffer: other.body).contains(#""code":"fingerprint_mismatch""#))
            let malformed = try await h.client.execute(uri: "/v1/astrology/charts/natal.svg?fingerprint=ABC", method: .post, headers: headers,
                                                       body: ByteBuffer(string: birth))
            #expect(malformed.status == .unprocessableContent && malformed.invalidFields == ["fingerprint"])
        }
    }
}
