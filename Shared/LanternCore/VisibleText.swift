/// One check for every short text a person types that others will see (display names today; titles and captions as
/// they come): what counts is what a reader sees.
///
/// - Length is counted in visible characters (grapheme clusters), so 👩‍💻 or 🏳️‍🌈 is one, and also in UTF-8 bytes,
///   so one letter carrying thousands of combining marks (one "character", 65 KB) is refused; no character may be
///   built from more than `maxScalarsPerCharacter` scalars.
/// - Control characters and invisible formatting (bidi overrides, zero-width spaces) are refused; the joiners that
///   real text needs are kept: U+200D inside emoji sequences, U+200C between letters (Persian, Indic scripts), tag
///   characters inside flag sequences.
/// - A text made only of blanks — spaces, fillers that render as nothing (U+3164 HANGUL FILLER, U+2800 BRAILLE PATTERN
///   BLANK, default-ignorable code points) — is refused: at least one character must show.
public enum VisibleText {
    public struct Limits: Sendable {
        public var maxCharacters: Int
        public var maxBytes: Int
        public var maxScalarsPerCharacter: Int
        public init(maxCharacters: Int, maxBytes: Int, maxScalarsPerCharacter: Int = 16) {
            self.maxCharacters = maxCharacters
            self.maxBytes = maxBytes
            self.maxScalarsPerCharacter = maxScalarsPerCharacter
        }
    }

    /// What is wrong, worded to follow the field's name in a problem's `errors`.
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The text with blanks trimmed from both ends, or why it cannot be shown.
    public static func validate(_ raw: String, _ limits: Limits) -> Result<String, Refusal> {
        let text = trimmed(raw)
        guard text.contains(where: isVisible) else { return .failure(Refusal(description: "must contain at least one visible character")) }
        if text.count > limits.maxCharacters {
            return .failure(Refusal(description: "must be at most \(limits.maxCharacters) characters"))
        }
        if text.utf8.count > limits.maxBytes {
            return .failure(Refusal(description: "must be at most \(limits.maxBytes) bytes in UTF-8"))
        }
        for character in text {
            if character.unicodeScalars.count > limits.maxScalarsPerCharacter {
                return .failure(Refusal(description: "must not stack more than \(limits.maxScalarsPerCharacter) marks or joiners on one character"))
            }
            if !character.unicodeScalars.allSatisfy({ isAllowed($0, in: character) }) {
                return .failure(Refusal(description: "must not contain control or invisible formatting characters"))
            }
        }
        return .success(text)
    }

    /// Blanks off both ends: whitespace and characters that show nothing.
    static func trimmed(_ raw: String) -> String {
        var text = Substring(raw)
        while let first = text.first, !isVisible(first) { text = text.dropFirst() }
        while let last = text.last, !isVisible(last) { text = text.dropLast() }
        return String(text)
    }

    /// Characters some fonts draw as blank though Unicode does not call them spaces or ignorable.
    static let blanks: Set<Unicode.Scalar> = ["\u{2800}", "\u{3164}", "\u{FFA0}", "\u{115F}", "\u{1160}"]

    /// A character shows something: one of its scalars is neither white space, nor ignorable, nor a known blank,
    /// nor a control or format character.
    static func isVisible(_ character: Character) -> Bool {
        character.unicodeScalars.contains { scalar in
            let properties = scalar.properties
            switch properties.generalCategory {
            case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .nonspacingMark, .enclosingMark, .spacingMark:
                return false
            default:
                return !properties.isWhitespace && !properties.isDefaultIgnorableCodePoint && !blanks.contains(scalar)
            }
        }
    }

    static func isAllowed(_ scalar: Unicode.Scalar, in character: Character) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator:
            return false
        case .format:
            let isEmoji = character.unicodeScalars.first?.properties.isEmoji == true
            switch scalar.value {
            case 0x200D: return isEmoji                   // zero width joiner: 👩‍💻, 🏳️‍🌈
            case 0xE0020...0xE007F: return isEmoji        // tags: subdivision flags 🏴󠁧󠁢󠁳󠁣󠁴󠁿
            case 0x200C: return true                       // zero width non-joiner: Persian and Indic words
            default: return false                          // bidi overrides, zero-width space, soft hyphen, …
            }
        default:
            // Unassigned code points stay allowed: emoji newer than this machine's Unicode tables are real text.
            return true
        }
    }
}
