extension String {
    /// The string without `suffix` at its end, if it ends so: a base URL and a path joined with one slash
    /// (`base.trimmingSuffix("/") + "/v1/…"`), whether the configured URL ends in `/` or not.
    public func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}

extension StringProtocol {
    /// Whether every character is an ASCII letter or digit or one of `punctuation` (ASCII too): the shape of
    /// identifiers clients send (time-zone names, request ids, device ids). Checked on the UTF-8 bytes, so a
    /// request pays a comparison per byte, not a lookup in Foundation's Unicode `CharacterSet` per scalar (which
    /// was over 1 % of a check-in's CPU).
    public func isASCIIIdentifier(allowing punctuation: StaticString) -> Bool {
        utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return punctuation.withUTF8Buffer { $0.contains(byte) }
            }
        }
    }
}

extension StringProtocol {
    /// The text without white space (newlines included) at either end. Foundation's `trimmingCharacters(in:)`
    /// goes through `NSString` on Linux, which was about 3 % of a roast's CPU in content; this walks the
    /// characters in place.
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
