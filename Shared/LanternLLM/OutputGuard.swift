import Foundation
import LanternCore

/// Judges a model's answer before anyone sees it: length in user-visible characters (grapheme clusters, so an
/// emoji or "й" counts once), the language asked for, and a blocklist (links, e-mail addresses, phone numbers,
/// slurs, medical or financial directives).
///
/// An over-long answer is cut at the last sentence end that fits, and only when what remains still reads whole
/// (at least half the limit, ending in a full stop, "!", "?" or "…"); otherwise it is a failure and the router
/// falls back. A wrapping pair of quotes, which models like to add, is removed first.
public struct OutputGuard: Sendable {
    public let blocklist: Blocklist

    public init(blocklist: Blocklist = .standard) { self.blocklist = blocklist }

    public func check(_ raw: String, format: OutputFormat, rules: OutputRules) throws -> String {
        switch format {
        case .choice(let options):
            let answer = raw.trimmingWhitespace()
            guard options.contains(answer) else { throw ProviderFailure(.guardRejected, "not one of the options") }
            return answer
        case .json:
            guard let data = raw.data(using: .utf8), (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
                throw ProviderFailure(.guardRejected, "not a JSON object")
            }
            return raw
        case .text:
            var text = Self.unwrapped(raw)
            guard !text.isEmpty else { throw ProviderFailure(.guardRejected, "empty") }
            if let limit = rules.maxCharacters, text.count > limit {
                guard let cut = Self.cut(text, to: limit) else {
                    throw ProviderFailure(.guardRejected, "\(text.count) characters, over \(limit), with no whole sentence to keep")
                }
                text = cut
            }
            // One lowercasing and one split into words for both checks.
            let scan = TextScan(text)
            if let problem = LanguageCheck.problem(scan, expected: rules.language) { throw ProviderFailure(.guardRejected, problem) }
            if let hit = blocklist.firstHit(in: scan) { throw ProviderFailure(.guardRejected, "blocklisted: \(hit)") }
            return text
        }
    }

    /// Trims whitespace and one pair of wrapping quotes (straight, curly or guillemets).
    static func unwrapped(_ raw: String) -> String {
        var text = raw.trimmingWhitespace()
        let pairs: [(Character, Character)] = [("\"", "\""), ("“", "”"), ("«", "»"), ("'", "'")]
        if text.count >= 2, let first = text.first, let last = text.last, pairs.contains(where: { $0.0 == first && $0.1 == last }) {
            text = String(text.dropFirst().dropLast()).trimmingWhitespace()
        }
        return text
    }

    static let sentenceEnds: Set<Character> = [".", "!", "?", "…"]

    /// The longest prefix of whole sentences within `limit` characters, if it keeps at least half of it.
    static func cut(_ text: String, to limit: Int) -> String? {
        let prefix = text.prefix(limit)
        var end: String.Index?
        var index = prefix.startIndex
        while index < prefix.endIndex {
            let next = prefix.index(after: index)
            // A sentence ends at . ! ? … followed by a space, a closing quote or the end of the text.
            if sentenceEnds.contains(prefix[index]) {
                let following = next < text.endIndex ? text[next] : " "
                if following.isWhitespace || following == "\"" || following == "”" || following == "»" { end = next }
            }
            index = next
        }
        guard let end else { return nil }
        let kept = String(text[..<end]).trimmingWhitespace()
        return kept.count * 2 >= limit ? kept : nil
    }
}

/// What an answer must not contain, as patterns and words (matched on word boundaries, case-insensitively).
public struct Blocklist: Sendable {
    let patterns: CompiledPatterns
    public var words: Set<String>
    public var phrases: [String]
    /// The patterns are `standard`'s, which `mayHoldPattern` knows.
    var prefiltered = false

    /// - Parameter patterns: regular expressions (ICU syntax), compiled once here.
    public init(patterns: [(name: String, regex: String)], words: Set<String>, phrases: [String]) {
        self.patterns = CompiledPatterns(patterns)
        self.words = words
        self.phrases = phrases
    }

    /// Links, e-mail addresses and phone numbers; the worst slurs; phrases that tell a reader what to do about
    /// their health or money (a fortune or a roast may talk about both, never prescribe).
    public static let standard: Blocklist = {
        var list = standardLists
        list.prefiltered = true
        return list
    }()

    static let standardLists = Blocklist(
        patterns: [
            ("link", #"(?i)\b(?:https?://|www\.)\S+"#),
            ("link", #"(?i)\b[a-z0-9-]+\.(?:com|net|org|io|ru|ua|info|biz|xyz|app|ly)\b"#),
            ("e-mail", #"(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b"#),
            ("phone", #"\+?\d[\d\s().-]{6,}\d"#),
        ],
        words: ["nigger", "nigga", "faggot", "fag", "retard", "retarded", "kike", "spic", "chink", "tranny", "dyke", "wetback",
                "gook", "coon", "kurwa", "хохол", "жид", "москаль", "підар", "пидор"],
        phrases: [
            "stop taking your", "stop your medication", "skip your medication", "double your dose", "increase your dose",
            "instead of seeing a doctor", "don't see a doctor", "do not see a doctor", "no need for a doctor",
            "invest in", "buy shares", "buy stock", "sell your shares", "put your savings", "take out a loan",
            "bet on", "bet your", "buy crypto", "buy bitcoin", "lottery ticket", "guaranteed return",
            "припиніть приймати", "не йдіть до лікаря", "інвестуйте в", "візьміть кредит", "купіть акції",
        ])

    /// The first thing in `text` that is blocked, named for logs (never the text itself).
    public func firstHit(in text: String) -> String? { firstHit(in: TextScan(text)) }

    func firstHit(in scan: TextScan) -> String? {
        if !prefiltered || Self.mayHoldPattern(scan.text), let name = patterns.firstMatch(in: scan.text) { return name }
        if scan.words.contains(where: { words.contains(String($0)) }) { return "word" }
        let bytes = Array(scan.lowercased.utf8)
        if phrases.contains(where: { Self.contains(bytes, Array($0.utf8)) }) { return "directive" }
        return nil
    }

    /// Whether a pattern of `standard` could match at all: a link needs "://", "www." or a dot right before a
    /// letter or digit; an e-mail address an "@"; a phone number two digits. Most texts have none, and the ICU
    /// regular expressions (with their UTF-16 copy of the text) were the largest cost of a locally written text.
    /// A custom pattern list is always run.
    static func mayHoldPattern(_ text: String) -> Bool {
        var digits = 0
        var previous: UInt8 = 0
        var ws = 0  // consecutive w or W: "www." is a link
        for byte in text.utf8 {
            if byte == UInt8(ascii: "."), ws >= 3 { return true }
            ws = byte | 0x20 == UInt8(ascii: "w") ? ws + 1 : 0
            switch byte {
            case UInt8(ascii: "@"): return true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits += 1
                if digits >= 2 || previous == UInt8(ascii: ".") { return true }
            case UInt8(ascii: "/") where previous == UInt8(ascii: ":"): return true
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                if previous == UInt8(ascii: ".") { return true }
            default: break
            }
            previous = byte
        }
        return false
    }

    /// Whether `needle` occurs in `haystack` (bytes of lowercased UTF-8: a phrase is found where its letters are).
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}

/// A small language check for short texts: the script of the letters, the letters only one of two neighbouring
/// languages uses, and the common words of the languages a model may drift into.
public enum LanguageCheck {
    /// Frequent short words by language, for telling English from the Latin-script languages a model drifts to
    /// (Italian, the spec's own example, Spanish, French, German, Portuguese).
    static let commonWords: [String: Set<String>] = [
        "en": ["the", "you", "your", "is", "are", "and", "of", "to", "a", "in", "will", "be", "it", "that", "with", "for", "today", "what", "not", "as", "at", "on", "this", "may", "can", "have", "let"],
        "it": ["il", "la", "di", "che", "è", "per", "un", "una", "non", "sono", "tuo", "tua", "oggi", "del", "della", "ti", "con", "le", "si", "gli"],
        "es": ["el", "la", "de", "que", "y", "en", "un", "una", "tu", "es", "hoy", "por", "con", "los", "las", "para", "no", "te"],
        "fr": ["le", "la", "de", "et", "un", "une", "est", "tu", "ton", "ta", "les", "des", "pour", "aujourd'hui", "que", "pas", "vous", "votre"],
        "de": ["der", "die", "das", "und", "ist", "du", "dein", "deine", "nicht", "ein", "eine", "heute", "mit", "zu", "den", "sich"],
        "pt": ["o", "a", "de", "que", "e", "do", "da", "em", "um", "uma", "você", "seu", "sua", "hoje", "não", "para", "com"],
        "vi": ["bạn", "của", "và", "là", "có", "không", "một", "những", "được", "trong", "hôm", "nay", "người", "này", "sẽ", "với"],
    ]

    /// Foundation's `CharacterSet.letters` (general categories L and M), read from the standard library's own
    /// Unicode tables: `CharacterSet.contains` per scalar was the largest part of this check's CPU on Linux.
    static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default:
            return false
        }
    }

    /// Each common word with the languages it is common in (one lookup per word of a text, not one per language).
    static let languagesOfWord: [String: [String]] = {
        var index: [String: [String]] = [:]
        for (language, words) in commonWords {
            for word in words { index[word, default: []].append(language) }
        }
        return index
    }()

    /// Why `text` is not in `expected`, or nil when it reads as that language.
    public static func problem(_ text: String, expected: TextLanguage) -> String? { problem(TextScan(text), expected: expected) }

    static func problem(_ scan: TextScan, expected: TextLanguage) -> String? {
        var letters = 0, cyrillic = 0, latin = 0
        for scalar in scan.text.unicodeScalars where isLetter(scalar) {
            letters += 1
            if (0x0400...0x04FF).contains(scalar.value) { cyrillic += 1 }
            // Basic Latin to Latin Extended-B, and Latin Extended Additional (Vietnamese).
            if scalar.value < 0x0250 || (0x1E00...0x1EFF).contains(scalar.value) { latin += 1 }
        }
        guard letters > 0 else { return "no letters" }
        let share = { (count: Int) in Double(count) / Double(letters) }
        switch expected {
        case .ukrainian:
            guard share(cyrillic) >= 0.85 else { return "not in Cyrillic script" }
            // ы э ъ ё are Russian letters, not Ukrainian ones.
            if scan.lowercased.unicodeScalars.contains(where: { "ыэъё".unicodeScalars.contains($0) }) { return "Russian letters in a Ukrainian text" }
            return nil
        case .english, .vietnamese:
            guard share(latin) >= 0.9 else { return "not in Latin script" }
            let words = scan.words
            var scores = commonWords.mapValues { _ in 0 }
            for word in words {
                for language in languagesOfWord[String(word)] ?? [] { scores[language, default: 0] += 1 }
            }
            let own = scores[expected.rawValue] ?? 0
            guard let best = scores.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key != expected.rawValue) }) else { return nil }
            // Short texts may have few common words; only a clear lead of another language is a wrong language.
            if best.key != expected.rawValue, best.value >= 2, best.value > own { return "reads as \(best.key), not \(expected.rawValue)" }
            if words.count >= 6, own == 0 { return "no common \(expected.englishName) words" }
            return nil
        }
    }
}

/// A text as the guard's checks read it: lowercased once, and split once into words.
struct TextScan {
    let text: String
    let lowercased: String
    /// Runs of letters and apostrophes of `lowercased`, as `split { !$0.isLetter && $0 != "'" }` cuts them, found
    /// on Unicode scalars: a scalar is in a word when it is alphabetic (what `Character.isLetter` asks of a
    /// character's first scalar) or an apostrophe, and a scalar that extends a character (a mark, a joiner) is
    /// where the scalar before it is. Splitting by `Character` broke the text into grapheme clusters first, the
    /// larger part of the guard's CPU. (The one difference: a lone mark right after an apostrophe, which makes a
    /// character of its own there, stays in the word here.)
    let words: [Substring]

    init(_ text: String) {
        self.text = text
        lowercased = text.lowercased()
        words = Self.words(of: lowercased)
    }

    static func words(of text: String) -> [Substring] {
        var words: [Substring] = []
        let scalars = text.unicodeScalars
        var start: String.Index?
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let inWord = isWordScalar(scalars[index], continuing: start != nil)
            if inWord, start == nil { start = index }
            if !inWord, let begun = start {
                words.append(text[begun..<index])
                start = nil
            }
            index = scalars.index(after: index)
        }
        if let begun = start { words.append(text[begun..<text.endIndex]) }
        return words
    }

    static func isWordScalar(_ scalar: Unicode.Scalar, continuing: Bool) -> Bool {
        if scalar.isASCII {
            let byte = UInt8(scalar.value) | 0x20
            return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || scalar == "'"
        }
        let properties = scalar.properties
        if properties.isAlphabetic { return true }
        // What extends a character (a mark, a joiner, an emoji's skin tone) belongs to the character before it: in
        // a word when that character was.
        if properties.isGraphemeExtend || properties.generalCategory == .spacingMark || properties.isEmojiModifier || scalar == "\u{200D}" {
            return continuing
        }
        return false
    }
}
