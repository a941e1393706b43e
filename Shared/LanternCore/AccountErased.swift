/// The account was deleted (`DELETE /v1/me`): its access tokens are refused and nothing of it is stored again.
/// Thrown by the token check (`AccessTokenVerifier`) and by a write that the erasure fence turned away
/// (`ErasedUsers.admit`); answered 401 `account_deleted`, as for any deleted account.
public struct AccountErased: ProblemConvertible, Sendable, CustomStringConvertible {
    public init() {}
    public var problem: Problem { .unauthorized("This account was deleted.", code: "account_deleted") }
    public var description: String { "account_deleted: the account was deleted" }
}
