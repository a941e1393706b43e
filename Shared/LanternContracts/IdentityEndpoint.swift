/// identity as the other services reach it: its published key set verifies every access token.
public enum IdentityEndpoint {
    /// `IDENTITY_URL`'s default: identity on a developer's machine (its port in Services/services.tsv; a test
    /// keeps the two equal).
    public static let localURL = "http://127.0.0.1:8081"
}
