import Foundation
import LanternCore
import Testing

/// A value with every kind of member `JSONWriter` writes, its members written in sorted order.
private struct Sample: JSONWritable, Equatable {
    struct Inner: JSONWritable, Equatable {
        var b: Bool
        var a: [String]

        func writeJSON(to writer: inout JSONWriter) {
            writer.object { json in
                json.member("a", a)
                json.member("b", b)
            }
        }
    }

    var text: String
    var optionalText: String?
    var count: Int
    var at: Date
    var flag: Bool?
    var names: [String]
    var inner: Inner?

    func writeJSON(to writer: inout JSONWriter) {
        writer.object { json in
            json.member("at", at)
            json.member("count", count)
            json.member("flag", flag)
            json.member("inner", inner)
            json.member("names", names)
            json.member("optionalText", optionalText)
            json.member("text", text)
        }
    }
}

@Suite("LanternCore: JSONWriter writes what JSONEncoder.lantern encodes (#45)")
struct JSONWritingTests {
    @Test("every control character, quotes, backslashes, slashes, non-ASCII text, nils, numbers, dates and nesting: the same bytes")
    func sameBytes() throws {
        var texts = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) } + ["\"", "\\", "/", "a/b", "</script>", "Привіт", "Tiếng Việt", "🐉", "\u{7F}",
                                                                           "\u{2028}\u{2029}", "", "plain", "tab\there \"quoted\" back\\slash"]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab\"\\/\n\t\u{1}é🐉 ")
        for _ in 0..<500 {
            texts.append(String((0..<Int.random(in: 0...10, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for (index, text) in texts.enumerated() {
            let sample = Sample(text: text, optionalText: index % 3 == 0 ? nil : text + "x", count: index * (index % 2 == 0 ? 1 : -7919),
                                at: Date(timeIntervalSince1970: 1_767_268_800.123 + Double(index) * 86_399.5), flag: index % 4 == 0 ? nil : index % 2 == 0,
                                names: Array(repeating: text, count: index % 3), inner: index % 5 == 0 ? nil : .init(b: true, a: [text]))
            let expected = try JSONEncoder.lantern.encode(sample)
            #expect(sample.jsonBytes == Array(expected), "\(String(decoding: expected, as: UTF8.self)) vs \(String(decoding: sample.jsonBytes, as: UTF8.self))")
        }
    }
}
