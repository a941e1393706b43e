import Foundation

/// Linking a Google or Apple identity to the signed-in account (Firebase's `linkWithCredential`, Supabase's
/// `linkIdentity`): the account gains a credential `(app, method, subject)` and keeps its id, so no other service
/// has data to move, and the identity then signs in to it from any device.
///
/// An identity signs in to one account (the credentials' primary key) and an account holds at most one identity
/// of each provider (`credentials_one_per_provider`); the store reads what the table holds and asks `decide`.
enum IdentityLinking {
    /// What the credentials table holds about one link, read in the transaction that writes it.
    struct State: Sendable, Equatable {
        /// The account the identity signs in to today, if any.
        var holder: UUID?
        /// The subject of the account's own identity of this provider, if it has one.
        var linkedSubject: String?
    }

    enum Decision: Sendable, Equatable {
        /// Add the credential.
        case link
        /// The identity already signs in to this account: nothing to add (linking is idempotent).
        case alreadyLinked
        case refuse(LinkFailure)
    }

    /// The identity's holder is looked at first: an identity that belongs to another account is the thing the
    /// user has to sort out, whatever else this account holds.
    static func decide(account: UUID, _ state: State) -> Decision {
        if let holder = state.holder {
            return holder == account ? .alreadyLinked : .refuse(.identityLinkedElsewhere)
        }
        return state.linkedSubject == nil ? .link : .refuse(.providerAlreadyLinked)
    }
}

/// Why an identity could not be linked; each is its own problem for the app to explain.
enum LinkFailure: Error, Sendable, Equatable {
    /// The identity already signs in to another account of the app (409 `identity_already_linked`).
    case identityLinkedElsewhere
    /// The account already holds another identity of this provider (409 `provider_already_linked`).
    case providerAlreadyLinked
    /// The token's account was deleted after the token was issued (401 `account_deleted`).
    case accountDeleted
}
