import LanternCore
import Testing

@Suite("Visible text")
struct VisibleTextTests {
    let name = VisibleText.Limits(maxCharacters: 40, maxBytes: 200)

    @Test("names people have are accepted, blanks trimmed: scripts, joiners, emoji sequences", arguments: [
        ("  Ada ", "Ada"), ("Олена", "Олена"), ("Nguyễn Văn An", "Nguyễn Văn An"), ("محمد", "محمد"),
        ("山田\u{3000}太郎", "山田\u{3000}太郎"),
        ("می\u{200C}خواهم", "می\u{200C}خواهم"),          // Persian: zero width non-joiner between letters
        ("👩‍💻", "👩‍💻"), ("👩‍❤️‍👨", "👩‍❤️‍👨"), ("🏳️‍🌈", "🏳️‍🌈"), ("🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"), ("👩🏽‍👩🏽‍👧🏽‍👦🏽", "👩🏽‍👩🏽‍👧🏽‍👦🏽"),
        ("\u{3164}Ana\u{2800}", "Ana"),
    ])
    func accepted(raw: String, expected: String) throws {
        #expect(try VisibleText.validate(raw, name).get() == expected)
    }

    @Test("invisible, oversize and disguised texts are refused", arguments: [
        ("", "visible"), ("   ", "visible"), ("\u{3164}", "visible"), ("\u{2800}\u{2800}", "visible"), ("\u{200B}", "visible"),
        ("\u{115F}\u{1160}", "visible"), ("\u{FFA0}", "visible"), ("\u{0301}\u{0301}", "visible"),
        (String(repeating: "x", count: 41), "40 characters"),
        ("a" + String(repeating: "\u{0301}", count: 32_740), "bytes"),       // one "character", 65 KB
        ("a" + String(repeating: "\u{0301}", count: 20), "marks"),
        (String(repeating: "👨‍👩‍👧‍👦", count: 9), "bytes"),                           // 9 characters, 225 bytes
        ("Ana\u{202E}nimda", "formatting"),                                    // right-to-left override
        ("An\u{200B}a", "formatting"), ("A\u{0007}na", "formatting"), ("Ana\nB", "formatting"),
        ("A\u{200D}na", "formatting"),                                          // a joiner outside emoji
    ])
    func refused(raw: String, reason: String) {
        guard case .failure(let refusal) = VisibleText.validate(raw, name) else {
            Issue.record("accepted \(raw.unicodeScalars.count) scalars: \(raw.prefix(20).debugDescription)")
            return
        }
        #expect(refusal.description.contains(reason), "\(refusal)")
    }
}
