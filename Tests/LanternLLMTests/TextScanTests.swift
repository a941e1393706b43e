import Foundation
import LanternCore
@testable import LanternLLM
import Testing

/// The guards' character scans read the standard library's Unicode tables and UTF-8 bytes instead of Foundation's
/// `CharacterSet` and `NSString`; Foundation stays the reference they must agree with.
@Suite("Text scans agree with Foundation")
struct TextScanTests {
    /// Foundation's Unicode tables here are of Unicode 15.1; the standard library's of 17.0, so scalars assigned in
    /// 16.0 or later are left out. Beyond the Basic Multilingual Plane Foundation on Linux also lacks whole blocks
    /// the standard library (and the Unicode Character Database) have as letters: Tangut (U+17000), the CJK
    /// extensions of plane 3; the comparison is of the BMP, where every script the guard tells apart lives.
    static let foundationUnicodeMajor = 16
    @Test("a letter for the language check is what CharacterSet.letters says, for every scalar of the Basic Multilingual Plane both assign")
    func letters() {
        var disagreements: [UInt32] = []
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            // Foundation's tables are of an older Unicode version than the standard library's: a scalar assigned
            // since is unknown to one of them, which is not a disagreement about letters.
            guard let age = scalar.properties.age, age.major < Self.foundationUnicodeMajor else { continue }
            if LanguageCheck.isLetter(scalar) != CharacterSet.letters.contains(scalar) { disagreements.append(value) }
        }
        #expect(disagreements.count == 0, "\(disagreements.count) scalars differ, first \(disagreements.prefix(10).map { String($0, radix: 16) }), ages \(Set(disagreements.compactMap { Unicode.Scalar($0)?.properties.age.map { "\($0.major).\($0.minor)" } }))")
        for text in ["Hôm nay bạn thật tuyệt.", "Сьогодні їжак", "Ελληνικά", "日本語", "a\u{301}", "🔥 fire", "12:30 — ok!"] {
            #expect(text.unicodeScalars.filter(LanguageCheck.isLetter).count == text.unicodeScalars.filter(CharacterSet.letters.contains).count, "\(text)")
        }
    }

    @Test("trimming white space is Foundation's trimmingCharacters(in: .whitespacesAndNewlines), on random texts")
    func trimming() {
        let pieces = [" ", "\n", "\t", "\r\n", "\u{00A0}", "\u{2003}", "\u{3000}", "a", "Đ", "ế", "é", "👨‍👩‍👧", "x\u{301}", ".", "—", "й"]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.debugDescription)")
        }
    }

    @Test("an ASCII identifier is ASCII letters, digits and the punctuation named, nothing else")
    func identifiers() {
        for (text, ok) in [("Asia/Ho_Chi_Minh", true), ("Etc/GMT+12", true), ("America/Port-au-Prince", true), ("", true),
                           ("Europe/Kyiv ", false), ("Europe/Київ", false), ("Asia/Ho_Chi_Minh\u{0}", false), ("Ａsia", false), ("a.b", false)] {
            #expect(text.isASCIIIdentifier(allowing: "/_-+") == ok, "\(text.debugDescription)")
        }
        for value in UInt32(0)...0x2FF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let reference = scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "/_-+".unicodeScalars.contains(scalar))
            #expect(String(Character(scalar)).isASCIIIdentifier(allowing: "/_-+") == reference, "U+\(String(value, radix: 16))")
        }
    }
}

/// The guard's split into words (`TextScan`, on Unicode scalars) against the split by `Character` it replaced.
@Suite("Words as Character.isLetter splits them")
struct TextScanWordsTests {
    static func reference(_ text: String) -> [String] { text.split { !$0.isLetter && $0 != "'" }.map(String.init) }

    @Test("the same words as a split by Character, on random texts of letters of several scripts, marks, emoji and punctuation")
    func randomTexts() {
        let pieces = [" ", "a", "Z", "đ", "ế", "e\u{302}\u{301}", "и\u{306}", "й", "ї", "'", "’", "-", ".", ",", "!", "1", "42", "😂", "👍🏽",
                      "👨‍👩‍👧", "🇻🇳", "🔥", "한", "กิ", "कि", "日本", "ß", "Ω", "\u{00A0}", "\n", "x\u{301}", "ǅ", "Ⅻ", "ª", "_", "@"]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...14, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            #expect(TextScan.words(of: text).map(String.init) == Self.reference(text), "\(text.debugDescription)")
        }
    }

    @Test("the same words for sentences in the apps' languages")
    func sentences() {
        for text in ["Hôm nay bạn sẽ gặp may mắn, đừng quên mỉm cười!", "Your 3 p.m. meeting could've been an e-mail — again.",
                     "Сьогодні зірки кажуть: не поспішай.", "Sếp bảo \"họp nhanh 5 phút\" và giờ đã là 2 tiếng. 😂"] {
            #expect(TextScan.words(of: text.lowercased()).map(String.init) == Self.reference(text.lowercased()), "\(text)")
        }
    }
}
