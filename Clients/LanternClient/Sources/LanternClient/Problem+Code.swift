/// The problem's `code` as text. The document lists the known codes as an enum next to the `http_4xx` pattern
/// (`anyOf`), which the generator turns into a two-part payload; apps switch on the text.
extension Components.Schemas.Problem {
    public var codeText: String? { code.value2 }
}
