import LanternCore

extension Problem {
    /// A valid token for an account that no longer exists (deleted moments ago).
    static let accountDeleted = Problem.unauthorized("This account no longer exists.", code: "account_deleted")
}
