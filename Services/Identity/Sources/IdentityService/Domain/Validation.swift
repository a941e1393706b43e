import Crypto
import Foundation
import LanternCore

/// The device id an app keeps in its keychain: a bearer secret, so it must carry enough randomness.
enum DeviceSecret {
    static func isAcceptable(_ id: String) -> Bool {
        if let uuid = UUID(uuidString: id) {
            return uuid != UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        }
        // base64url or hex of ≥ 128 bits; a run of one repeated character is obviously not random.
        guard (22...128).contains(id.count), Set(id).count > 4 else { return false }
        return id.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }
    }

    /// Stored form: SHA-256, so a database leak does not hand out working device credentials.
    static func subject(_ id: String) -> String {
        let normalized = UUID(uuidString: id)?.uuidString.lowercased() ?? id
        return SHA256.hash(data: Data(("device:" + normalized).utf8)).hexEncoded
    }
}

enum DisplayName {
    /// 1–40 visible characters after trimming; no control characters.
    static func validate(_ raw: String) -> Result<String, FieldMessage> {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return .failure("must contain at least one visible character") }
        if trimmed.count > 40 { return .failure("must be at most 40 characters") }
        if trimmed.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) || $0.properties.generalCategory == .format && $0 != "\u{200D}" }) {
            return .failure("must not contain control or invisible formatting characters")
        }
        return .success(trimmed)
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
        (1...128).contains(id.count) && id.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".:_-".unicodeScalars.contains($0))
        }
    }

    static func isPushToken(_ token: String, platform: String) -> Bool {
        if platform == "ios" {
            return (64...200).contains(token.count) && token.allSatisfy(\.isHexDigit)
        }
        return (1...4096).contains(token.count) && token.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 32 }
    }
}
