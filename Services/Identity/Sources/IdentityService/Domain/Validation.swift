import Crypto
import Foundation
import LanternCore

/// The device id an app keeps in its keychain: a bearer secret, so it must carry enough randomness.
enum DeviceSecret {
    /// A UUID v4 (122 random bits: what `UUID()` makes on iOS and Android), or 22–128 characters of base64url or hex
    /// (≥ 128 bits). Ids that are obviously not random are refused: a repeated pattern (`abcdeabcde…`), a run of
    /// consecutive characters (`0123456789abcdef…`), or too few distinct characters for their length. A random id
    /// fails these with a probability below 10⁻⁹; they stop ids typed or derived by hand, not a determined
    /// attacker who can pick any secret for an account that is theirs anyway.
    static func isAcceptable(_ id: String) -> Bool {
        let characters: [UInt8]
        if let uuid = UUID(uuidString: id) {
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            guard bytes[6] >> 4 == 4, bytes[8] >> 6 == 0b10 else { return false }  // version 4, RFC 9562 variant
            characters = Array(uuid.uuidString.lowercased().utf8.filter { $0 != UInt8(ascii: "-") })
        } else {
            guard (22...128).contains(id.utf8.count), id.utf8.allSatisfy({ isBase64URL($0) }) else { return false }
            characters = Array(id.utf8)
        }
        return looksRandom(characters)
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }

    static func looksRandom(_ characters: [UInt8]) -> Bool {
        let count = characters.count
        // A period shorter than half the length: the id repeats itself.
        for period in 1...max(1, count / 2) where (period..<count).allSatisfy({ characters[$0] == characters[$0 - period] }) {
            return false
        }
        // Steps of ±1 between neighbours in two thirds of the places or more: a counted sequence (32 random hex
        // digits: probability ≈ 10⁻¹³).
        let steps = zip(characters, characters.dropFirst()).filter { abs(Int($0) - Int($1)) == 1 }.count
        if steps * 3 >= (count - 1) * 2 { return false }
        // Distinct characters: 32 random hex digits show about 14 (6 or fewer: probability ≈ 2 × 10⁻¹⁰), 22 random
        // base64url characters about 18.
        return Set(characters).count >= min(7, count / 3)
    }

    /// Stored form: SHA-256, so a database leak does not hand out working device credentials.
    static func subject(_ id: String) -> String {
        let normalized = UUID(uuidString: id)?.uuidString.lowercased() ?? id
        return SHA256.hash(data: Data(("device:" + normalized).utf8)).hexEncoded
    }
}

enum DisplayName {
    /// 1–40 visible characters and at most 200 bytes after trimming (`VisibleText`): shown to the partner, pushed in
    /// notifications, carried in real-time frames.
    static let limits = VisibleText.Limits(maxCharacters: 40, maxBytes: 200)

    static func validate(_ raw: String) -> Result<String, FieldMessage> {
        VisibleText.validate(raw, limits).mapError { FieldMessage(stringLiteral: $0.description) }
    }
}

enum Locales {
    /// BCP 47 shape: a 2–3 letter language, then optional subtags (`en`, `uk`, `vi-VN`, `zh-Hant-TW`).
    static func isValid(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let language = parts.first, (2...3).contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLetter }),
              tag.count <= 35 else { return false }
        return parts.dropFirst().allSatisfy { (2...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }
}

struct FieldMessage: Error, ExpressibleByStringLiteral, CustomStringConvertible {
    var description: String
    init(stringLiteral value: String) { description = value }
}

extension FieldValidator {
    mutating func fail(_ field: String, _ message: FieldMessage) { fail(field, message.description) }
}

/// What a device registration must look like (`PUT /v1/me/devices/{deviceId}`).
enum DeviceRules {
    static func isDeviceID(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.isASCIIIdentifier(allowing: ".:_-")
    }

    static func isPushToken(_ token: String, platform: String) -> Bool {
        if platform == "ios" {
            return (64...200).contains(token.count) && token.allSatisfy(\.isHexDigit)
        }
        return (1...4096).contains(token.count) && token.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 32 }
    }
}
