import Foundation

/// Splits a SQL file into single statements.
///
/// postgres-nio speaks the extended protocol, which runs one statement per query, so migration files are split
/// here. Quotes, `$tag$` bodies and comments are respected, so functions and DO blocks survive intact.
public enum SQLScript {
    public static func statements(_ script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        let chars = Array(script)
        var i = 0
        var dollarTag: String?
        var inSingle = false
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
                if c == "'" { inSingle = false }
                i += 1; continue
            }
            switch c {
            case "'":
                inSingle = true
                current.append(c); i += 1
            case "-" where i + 1 < chars.count && chars[i + 1] == "-":
                while i < chars.count && chars[i] != "\n" { i += 1 }
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
