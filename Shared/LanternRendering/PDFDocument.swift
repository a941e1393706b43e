import CRendering
import Foundation

/// A flowing A4 PDF laid out by Pango on Cairo: headings, wrapped paragraphs in any script the fonts cover (Noto:
/// Latin, Cyrillic, Vietnamese), bullet lists and SVG pictures drawn by librsvg, broken across pages line by line.
/// Fonts are subset and embedded by Cairo, so the file reads the same anywhere.
///
/// One document belongs to one thread from `init` to `finish()` (a Cairo context is not thread-safe, and Pango's
/// default font map is per thread): build it inside `Renderer.run`.
public final class PDFDocument {
    /// A4 in PostScript points.
    public static let a4 = (width: 595.276, height: 841.89)

    public struct Style: Sendable {
        public var margin = 56.0
        public var bodyFont = "Noto Serif 10.5"
        public var headingFont = "Noto Sans Bold 13"
        public var titleFont = "Noto Sans Bold 22"
        public var smallFont = "Noto Sans 8.5"
        public var footer: String?
        public init() {}
    }

    private let surface: OpaquePointer
    private let context: OpaquePointer
    private let sink: Sink
    private let style: Style
    private var y: Double
    private var pages = 1
    private let width: Double
    private let bottom: Double

    final class Sink {
        var data = Data()
    }

    /// - Parameter title: the PDF's metadata title.
    public init(title: String, style: Style = Style()) throws {
        self.style = style
        sink = Sink()
        let write: cairo_write_func_t = { closure, bytes, length in
            guard let closure, let bytes else { return CAIRO_STATUS_WRITE_ERROR }
            Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue().data.append(bytes, count: Int(length))
            return CAIRO_STATUS_SUCCESS
        }
        surface = cairo_pdf_surface_create_for_stream(write, Unmanaged.passUnretained(sink).toOpaque(), Self.a4.width, Self.a4.height)
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else { throw RenderingError("cannot create a PDF surface") }
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title)
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "Lantern")
        context = cairo_create(surface)
        width = Self.a4.width - 2 * style.margin
        bottom = Self.a4.height - style.margin - (style.footer == nil ? 0 : 14)
        y = style.margin
        drawFooter()
    }

    deinit {
        cairo_destroy(context)
        cairo_surface_destroy(surface)
    }

    public var pageCount: Int { pages }

    public func title(_ text: String) { paragraph(text, font: style.titleFont, after: 10) }
    public func heading(_ text: String) { space(8); paragraph(text, font: style.headingFont, after: 6, keepWithNext: 40) }
    public func small(_ text: String, gray: Double = 0.35) { paragraph(text, font: style.smallFont, after: 8, gray: gray) }

    /// Body text; a blank line in `text` starts a new paragraph.
    public func body(_ text: String) {
        for part in text.components(separatedBy: "\n\n") where !part.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            paragraph(part.trimmingCharacters(in: .whitespacesAndNewlines), font: style.bodyFont, after: 7, justify: true)
        }
    }

    public func bullets(_ items: [String]) {
        for item in items { paragraph(item, font: style.bodyFont, after: 5, indent: 14, bullet: "•") }
    }

    public func space(_ points: Double) { y += points }

    /// Draws an SVG centred, `size` points wide at most (its aspect kept), on this page if it fits, else the next.
    public func svg(_ svg: String, size: Double) throws {
        var error: UnsafeMutablePointer<GError>?
        let bytes = Array(svg.utf8)
        guard let handle = bytes.withUnsafeBufferPointer({ rsvg_handle_new_from_data($0.baseAddress, gsize($0.count), &error) }) else {
            defer { if let error { g_error_free(error) } }
            throw RenderingError("the SVG does not parse: \(error.map { String(cString: $0.pointee.message) } ?? "unknown")")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(handle)) }
        var w = 0.0, h = 0.0
        if rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) == 0 || w <= 0 || h <= 0 { (w, h) = (size, size) }
        let scale = min(size / w, size / h)
        let (drawW, drawH) = (w * scale, h * scale)
        if y + drawH > bottom { newPage() }
        var viewport = RsvgRectangle(x: style.margin + (width - drawW) / 2, y: y, width: drawW, height: drawH)
        guard rsvg_handle_render_document(handle, context, &viewport, &error) != 0 else {
            defer { if let error { g_error_free(error) } }
            throw RenderingError("the SVG does not render: \(error.map { String(cString: $0.pointee.message) } ?? "unknown")")
        }
        y += drawH + 10
    }

    /// Ends the document; the PDF's bytes.
    public func finish() throws -> Data {
        cairo_show_page(context)
        cairo_surface_finish(surface)
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else { throw RenderingError("the PDF could not be written") }
        return sink.data
    }

    // MARK: Layout

    private func paragraph(_ text: String, font: String, after: Double, indent: Double = 0, bullet: String? = nil,
                           justify: Bool = false, gray: Double = 0, keepWithNext: Double = 0) {
        let layout = pango_cairo_create_layout(context)!
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        let description = pango_font_description_from_string(font)
        defer { pango_font_description_free(description) }
        pango_layout_set_font_description(layout, description)
        pango_layout_set_width(layout, Int32((width - indent) * Double(PANGO_SCALE)))
        pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
        pango_layout_set_justify(layout, justify ? 1 : 0)
        pango_layout_set_text(layout, text, -1)
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_extents(layout, &ink, &logical)
        if keepWithNext > 0, y + Double(logical.height) / Double(PANGO_SCALE) + keepWithNext > bottom { newPage() }
        cairo_set_source_rgb(context, gray, gray, gray)
        // Line by line, so a long paragraph continues on the next page.
        let iterator = pango_layout_get_iter(layout)!
        defer { pango_layout_iter_free(iterator) }
        var first = true
        repeat {
            var lineRect = PangoRectangle()
            pango_layout_iter_get_line_extents(iterator, nil, &lineRect)
            let lineHeight = Double(lineRect.height) / Double(PANGO_SCALE)
            if y + lineHeight > bottom { newPage(); cairo_set_source_rgb(context, gray, gray, gray) }
            let baseline = Double(pango_layout_iter_get_baseline(iterator) - lineRect.y) / Double(PANGO_SCALE)
            let x = style.margin + indent + Double(lineRect.x) / Double(PANGO_SCALE)
            if first, let bullet {
                cairo_move_to(context, style.margin + 2, y + baseline)
                showText(bullet, font: font)
            }
            cairo_move_to(context, x, y + baseline)
            pango_cairo_show_layout_line(context, pango_layout_iter_get_line_readonly(iterator))
            y += lineHeight
            first = false
        } while pango_layout_iter_next_line(iterator) != 0
        y += after
    }

    private func showText(_ text: String, font: String) {
        let layout = pango_cairo_create_layout(context)!
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        let description = pango_font_description_from_string(font)
        defer { pango_font_description_free(description) }
        pango_layout_set_font_description(layout, description)
        pango_layout_set_text(layout, text, -1)
        pango_cairo_show_layout_line(context, pango_layout_get_line_readonly(layout, 0))
    }

    private func newPage() {
        cairo_show_page(context)
        pages += 1
        y = style.margin
        drawFooter()
    }

    private func drawFooter() {
        guard let footer = style.footer else { return }
        let saved = y
        y = Self.a4.height - style.margin + 4
        let text = "\(footer) · \(pages)"
        let layout = pango_cairo_create_layout(context)!
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        let description = pango_font_description_from_string(style.smallFont)
        defer { pango_font_description_free(description) }
        pango_layout_set_font_description(layout, description)
        pango_layout_set_width(layout, Int32(width * Double(PANGO_SCALE)))
        pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER)
        pango_layout_set_text(layout, text, -1)
        cairo_set_source_rgb(context, 0.5, 0.5, 0.5)
        cairo_move_to(context, style.margin, y)
        pango_cairo_show_layout(context, layout)
        y = saved
    }
}

public struct RenderingError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
