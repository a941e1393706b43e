extension Sequence where Element == UInt8 {
    /// Lower-case hexadecimal, two digits a byte (digests, random tokens).
    public var hexEncoded: String {
        var text = ""
        text.reserveCapacity(underestimatedCount * 2)
        let digits = Array("0123456789abcdef")
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}
