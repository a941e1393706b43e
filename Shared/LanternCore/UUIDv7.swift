import Foundation

extension UUID {
    /// A time-ordered UUID (RFC 9562 version 7): event ids sort by creation time, which keeps indexes compact.
    public static func v7(at date: Date = Date()) -> UUID {
        let millis = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: millis >> (8 * (5 - i))) }
        var random = SystemRandomNumberGenerator()
        for i in 6..<16 { bytes[i] = UInt8.random(in: 0...255, using: &random) }
        bytes[6] = (bytes[6] & 0x0F) | 0x70  // version 7
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// When a version 7 UUID was made (its first 48 bits, milliseconds since 1970); nil for any other version. An
    /// account id is one (identity makes it as the account is created), so its age needs no lookup and cannot be
    /// claimed by a client.
    public var v7Date: Date? {
        let bytes = uuid
        guard bytes.6 >> 4 == 7 else { return nil }
        let millis = [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    /// Lower-case text form used on the wire and in logs: `uuidString.lowercased()`, written from the bytes (the
    /// two steps cost a request id and every id a response carries twenty times as much).
    public var lowercased: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var at = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    text[at] = Self.hexDigits[Int(bytes[index] >> 4)]
                    text[at + 1] = Self.hexDigits[Int(bytes[index] & 0x0F)]
                    at += 2
                }
                return at
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
