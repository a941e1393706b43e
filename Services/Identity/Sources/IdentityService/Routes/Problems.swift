import LanternCore

extension Problem {
    /// A valid token for an account that no longer exists (deleted moments ago).
    static let accountDeleted = Problem.unauthorized("This account no longer exists.", code: "account_deleted")

    /// Linking: the Google or Apple identity already signs in to another account of the app. `provider` names it.
    static func identityAlreadyLinked(_ method: String) -> Problem {
        let provider = providerName(method)
        return Problem(status: 409, code: "identity_already_linked", title: "Conflict",
                       detail: "This \(provider) account already signs in to another account of this app; sign in with it there, or link another \(provider) account.",
                       extensions: ["provider": .string(method)])
    }

    /// Linking: the account already holds another identity of this provider (one Google and one Apple identity per
    /// account). `provider` names it.
    static func providerAlreadyLinked(_ method: String) -> Problem {
        let provider = providerName(method)
        return Problem(status: 409, code: "provider_already_linked", title: "Conflict",
                       detail: "This account already has another \(provider) account linked; an account links one \(provider) account.",
                       extensions: ["provider": .string(method)])
    }

    private static func providerName(_ method: String) -> String {
        switch method {
        case "google": "Google"
        case "apple": "Apple"
        default: method
        }
    }
}
