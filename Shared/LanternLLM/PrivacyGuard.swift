import Foundation

/// The last check before a prompt leaves the process for a remote provider: no birth date, clock time,
/// coordinates, e-mail address, phone number or id (UUID) may be in it, whatever the caller built.
///
/// Prompts are made of descriptors by construction (`LLMRequest`); this guard catches a descriptor that carries
/// raw data by mistake. A refused prompt is not sent to any remote model, and the router falls back to the local
/// generator, which never leaves the process. Years are refused too: a birth year is personal, and a prompt
/// needs a pillar or an animal, not a year.
public struct PrivacyGuard: Sendable {
    static let patterns = CompiledPatterns([
        ("date", #"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b"#),
        ("date", #"\b\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}\b"#),
        ("date", #"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"#),
        ("date", #"(?i)\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"#),
        ("year", #"\b(?:18|19|20|21)\d{2}\b"#),
        ("time", #"\b(?:[01]?\d|2[0-3])[:h][0-5]\d\b"#),
        ("time", #"(?i)\b(?:1[0-2]|0?[1-9])\s*(?:a\.?m\.?|p\.?m\.?)(?=\W|$)"#),
        ("coordinates", #"[-+]?\b\d{1,3}[.,]\d{3,}\b"#),
        ("coordinates", #"\d{1,3}\s*°"#),
        ("e-mail", #"(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b"#),
        ("phone", #"\+?\d[\d\s().-]{6,}\d"#),
        ("id", #"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"#),
    ])

    public init() {}

    /// What kind of personal data `text` holds, or nil.
    public func finding(in text: String) -> String? {
        Self.patterns.firstMatch(in: text)
    }

    /// Throws `ProviderFailure(.privacy)` when the system instruction or the prompt holds personal data.
    public func check(_ request: LLMRequest) throws {
        for text in [request.system, request.prompt] {
            if let found = finding(in: text) { throw ProviderFailure(.privacy, "the prompt of \(request.task) holds a \(found)") }
        }
    }
}

/// Regular expressions compiled once (compiling per call would cost more than the router's whole overhead
/// budget). `NSRegularExpression` is immutable after creation and safe to share between threads.
struct CompiledPatterns: @unchecked Sendable {
    let patterns: [(name: String, regex: NSRegularExpression)]

    init(_ patterns: [(name: String, regex: String)]) {
        // The patterns are constants of this module; one that does not compile is a programming error.
        self.patterns = patterns.map { ($0.name, try! NSRegularExpression(pattern: $0.regex)) }
    }

    /// The name of the first pattern found in `text`.
    func firstMatch(in text: String) -> String? {
        let range = NSRange(text.startIndex..., in: text)
        return patterns.first { $0.regex.firstMatch(in: text, range: range) != nil }?.name
    }
}
