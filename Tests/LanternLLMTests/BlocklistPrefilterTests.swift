import Foundation
@testable import LanternLLM
import Testing

@Suite("The blocklist's prefilter")
struct BlocklistPrefilterTests {
    @Test("whenever a standard pattern matches, the prefilter lets the text through to it (random texts and known links, addresses, numbers)")
    func neverSkipsAMatch() {
        let known = ["see https://x.y", "WWW.example.org", "www.!", "mail me: a@b.co", "call +84 90 123 4567", "1      2", "go to roast.app now",
                     "example.COM", "v1.2", "Hết giờ rồi.Bạn ơi", "a.b"]
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("abcwW .:/@0123456789-+()ệơ\n")
        var texts = known
        for _ in 0..<20_000 {
            texts.append(String((0..<Int.random(in: 0...24, using: &random)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }))
        }
        let patterns = Blocklist.standardLists.patterns
        for text in texts where patterns.firstMatch(in: text) != nil {
            #expect(Blocklist.mayHoldPattern(text), "the prefilter would skip '\(text)'")
        }
        #expect(!Blocklist.mayHoldPattern("Your calendar called. It wants a day off too."))
        #expect(Blocklist.standard.firstHit(in: "see www.example.com") == "link" && Blocklist.standard.firstHit(in: "a@b.co") == "e-mail")
        #expect(Blocklist.standard.firstHit(in: "Time to put your savings on red.") == "directive")
        #expect(Blocklist.contains(Array("abc".utf8), Array("bc".utf8)) && !Blocklist.contains(Array("ab".utf8), Array("abc".utf8)))
    }
}
