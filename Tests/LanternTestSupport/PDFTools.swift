import Foundation

/// poppler's command-line tools (installed by scripts/lib.sh), to read a PDF back as a person's viewer would.
public enum PDFTools {
    /// The text of `pdf`, laid out (`pdftotext -layout` off: reading order, one paragraph's words joined).
    public static func text(_ pdf: Data) async throws -> String {
        try await withFile(pdf) { path in
            let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/pdftotext"), ["-enc", "UTF-8", path, "-"])
            guard output.status == 0 else { throw ToolFailure(description: "pdftotext: \(output.stderr)") }
            return String(decoding: output.stdout, as: UTF8.self)
        }
    }

    /// `pdffonts`' table: one line per font, with its embedded/subset columns.
    public static func fonts(_ pdf: Data) async throws -> [String] {
        try await withFile(pdf) { path in
            let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/pdffonts"), [path])
            guard output.status == 0 else { throw ToolFailure(description: "pdffonts: \(output.stderr)") }
            return String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").dropFirst(2).map(String.init)
        }
    }

    /// `pdfinfo`'s fields (`Pages`, `Page size`, `Title`…).
    public static func info(_ pdf: Data) async throws -> [String: String] {
        try await withFile(pdf) { path in
            let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/pdfinfo"), [path])
            guard output.status == 0 else { throw ToolFailure(description: "pdfinfo: \(output.stderr)") }
            var fields: [String: String] = [:]
            for line in String(decoding: output.stdout, as: UTF8.self).split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return fields
        }
    }

    /// Page `page` as a PNG at `dpi`, written to `output` (to look at).
    public static func png(_ pdf: Data, page: Int = 1, dpi: Int = 60, to output: URL) async throws {
        try await withFile(pdf) { path in
            let stem = output.deletingPathExtension().path
            let result = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/pdftoppm"),
                                                    ["-png", "-r", "\(dpi)", "-f", "\(page)", "-l", "\(page)", "-singlefile", path, stem])
            guard result.status == 0 else { throw ToolFailure(description: "pdftoppm: \(result.stderr)") }
        }
    }

    public struct ToolFailure: Error, CustomStringConvertible { public var description: String }

    private static func withFile<T>(_ pdf: Data, _ body: (String) async throws -> T) async throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-\(UUID().uuidString).pdf")
        try pdf.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url.path)
    }
}
