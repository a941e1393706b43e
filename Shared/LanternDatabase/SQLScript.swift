import Foundation

/// Splits a SQL file into single statements.
///
/// postgres-nio speaks the extended protocol, which runs one statement per query, so migration files are split
/// here. String constants (also `E'…'` with backslash escapes), quoted identifiers, `$tag$` bodies and comments
/// (`--` and nested `/* */`, both dropped) are respected, so functions and DO blocks survive intact.
public enum SQLScript {
    public static func statements(_ script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        let chars = Array(script)
        var i = 0
        var dollarTag: String?
        var inSingle = false
        var backslashEscapes = false  // inside E'…'
        var inDouble = false
        while i < chars.count {
            let c = chars[i]
            if let tag = dollarTag {
                if c == "$", String(chars[i..<min(chars.count, i + tag.count)]) == tag {
                    current += tag
                    i += tag.count
                    dollarTag = nil
                    continue
                }
                current.append(c); i += 1; continue
            }
            if inSingle {
                current.append(c)
                if backslashEscapes, c == "\\", i + 1 < chars.count {
                    current.append(chars[i + 1]); i += 2; continue
                }
                if c == "'" { inSingle = false }
                i += 1; continue
            }
            if inDouble {
                current.append(c)
                if c == "\"" { inDouble = false }
                i += 1; continue
            }
            switch c {
            case "'":
                // E'…' (not the end of an identifier such as `type'…'`): backslashes escape.
                let previous = i > 0 ? chars[i - 1] : " "
                let beforePrevious = i > 1 ? chars[i - 2] : " "
                backslashEscapes = (previous == "E" || previous == "e") && !(beforePrevious.isLetter || beforePrevious.isNumber || beforePrevious == "_")
                inSingle = true
                current.append(c); i += 1
            case "\"":
                inDouble = true
                current.append(c); i += 1
            case "-" where i + 1 < chars.count && chars[i + 1] == "-":
                while i < chars.count && chars[i] != "\n" { i += 1 }
            case "/" where i + 1 < chars.count && chars[i + 1] == "*":
                // Block comments nest in PostgreSQL.
                var depth = 0
                while i < chars.count {
                    if chars[i] == "/", i + 1 < chars.count, chars[i + 1] == "*" { depth += 1; i += 2; continue }
                    if chars[i] == "*", i + 1 < chars.count, chars[i + 1] == "/" { depth -= 1; i += 2; if depth == 0 { break }; continue }
                    i += 1
                }
                current.append(" ")
            case "$":
                var j = i + 1
                while j < chars.count, chars[j].isLetter || chars[j].isNumber || chars[j] == "_" { j += 1 }
                if j < chars.count, chars[j] == "$" {
                    let tag = String(chars[i...j])
                    dollarTag = tag
                    current += tag
                    i = j + 1
                } else {
                    current.append(c); i += 1
                }
            case ";":
                let trimmed = current.trimmingCharacters(in: .whitespacesAndNewlines)
                if !trimmed.isEmpty { statements.append(trimmed) }
                current = ""
                i += 1
            default:
                current.append(c); i += 1
            }
        }
        let trimmed = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !trimmed.isEmpty { statements.append(trimmed) }
        return statements
    }
}
