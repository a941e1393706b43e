extension String {
    /// The string without `suffix` at its end, if it ends so: a base URL and a path joined with one slash
    /// (`base.trimmingSuffix("/") + "/v1/…"`), whether the configured URL ends in `/` or not.
    public func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
