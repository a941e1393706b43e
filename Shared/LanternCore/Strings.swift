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
