import Foundation
@testable import IdentityService
import LanternCore
import Testing

@Suite("The profile's JSON, written directly, is what JSONEncoder.lantern encodes (#45)")
struct UserJSONTests {
    @Test("every member present or left out, names with quotes, slashes, control characters and other scripts, dates of any time")
    func sameBytes() throws {
        let names: [String?] = [nil, "Olena", "O\"Brien \\ / <b>", "Тарас", "Nguyễn Văn A", "tab\there\nnew", "\u{1}\u{1F}", "🐉", ""]
        for (index, name) in names.enumerated() {
            let user = User(id: UUID().lowercased, app: ["luckyday", "pairly", "astrosvitla"][index % 3], displayName: name,
                            email: index % 2 == 0 ? nil : "user\(index)@example.com", timeZone: index % 3 == 0 ? nil : "Europe/Kyiv",
                            locale: index % 4 == 0 ? nil : "uk", signInMethods: Array(["apple", "device", "google"].prefix(index % 4)),
                            createdAt: Date(timeIntervalSince1970: 1_700_000_000.0005 * Double(index + 1) / 3),
                            updatedAt: Date(timeIntervalSince1970: 1_767_268_800.123 + Double(index)))
            let expected = try JSONEncoder.lantern.encode(user)
            #expect(user.jsonBytes == Array(expected), "\(String(decoding: expected, as: UTF8.self))")
        }
    }
}
