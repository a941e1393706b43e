import CRendering
import Foundation

/// A raster picture drawn with Cairo and laid out by Pango (share cards, pet images): gradients, rounded panels,
/// wrapped text in any script the fonts cover (Noto: Latin, Cyrillic, Vietnamese; Noto Color Emoji), SVG drawn by
/// librsvg; written as PNG. Cairo's PNG writer adds no text chunks, so the file carries no metadata.
///
/// One canvas belongs to one thread from `init` to `png()` (a Cairo context is not thread-safe, and Pango's default
/// font map is per thread): draw it inside `Renderer.run`.
public final class ImageCanvas {
    /// An sRGB colour, `#RRGGBB` or `#RRGGBBAA`.
    public struct Color: Sendable, Equatable {
        public var red: Double
        public var green: Double
        public var blue: Double
        public var alpha: Double

        public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
            self.red = red
            self.green = green
            self.blue = blue
            self.alpha = alpha
        }

        /// `#RRGGBB` or `#RRGGBBAA`; nil for anything else.
        public init?(hex: String) {
            let digits = hex.hasPrefix("#") ? hex.dropFirst() : Substring(hex)
            guard digits.count == 6 || digits.count == 8, let value = UInt32(digits, radix: 16) else { return nil }
            let full = digits.count == 6 ? value << 8 | 0xFF : value
            self.init(red: Double(full >> 24 & 0xFF) / 255, green: Double(full >> 16 & 0xFF) / 255, blue: Double(full >> 8 & 0xFF) / 255,
                      alpha: Double(full & 0xFF) / 255)
        }

        public static let white = Color(red: 1, green: 1, blue: 1)
        public static let black = Color(red: 0, green: 0, blue: 0)

        public func with(alpha: Double) -> Color { Color(red: red, green: green, blue: blue, alpha: alpha) }
    }

    public enum Alignment: Sendable {
        case left, center, right

        var pango: PangoAlignment {
            switch self {
            case .left: PANGO_ALIGN_LEFT
            case .center: PANGO_ALIGN_CENTER
            case .right: PANGO_ALIGN_RIGHT
            }
        }
    }

    public let width: Int
    public let height: Int
    private let surface: OpaquePointer
    private let context: OpaquePointer

    public init(width: Int, height: Int) throws {
        guard (1...8192).contains(width), (1...8192).contains(height) else { throw RenderingError("a canvas of \(width)×\(height) pixels") }
        self.width = width
        self.height = height
        surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else { throw RenderingError("cannot create a \(width)×\(height) image") }
        context = cairo_create(surface)
        // Text as a person would see it on a phone: grey-scale antialiasing, hinting off (no colour fringes on a
        // picture that is scaled by the share sheet).
        let options = cairo_font_options_create()
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_set_font_options(context, options)
        cairo_font_options_destroy(options)
    }

    deinit {
        cairo_destroy(context)
        cairo_surface_destroy(surface)
    }

    private func set(_ color: Color) { cairo_set_source_rgba(context, color.red, color.green, color.blue, color.alpha) }

    /// Fills the whole canvas with a vertical gradient from `top` to `bottom`.
    public func fillGradient(top: Color, bottom: Color) {
        let pattern = cairo_pattern_create_linear(0, 0, 0, Double(height))
        defer { cairo_pattern_destroy(pattern) }
        cairo_pattern_add_color_stop_rgba(pattern, 0, top.red, top.green, top.blue, top.alpha)
        cairo_pattern_add_color_stop_rgba(pattern, 1, bottom.red, bottom.green, bottom.blue, bottom.alpha)
        cairo_rectangle(context, 0, 0, Double(width), Double(height))
        cairo_set_source(context, pattern)
        cairo_fill(context)
    }

    /// A filled circle (a background's glow, a dot of an indicator).
    public func circle(x: Double, y: Double, radius: Double, color: Color) {
        cairo_new_path(context)
        cairo_arc(context, x, y, radius, 0, 2 * Double.pi)
        set(color)
        cairo_fill(context)
    }

    /// A filled rectangle with rounded corners; with `stroke`, outlined too.
    public func roundedRect(x: Double, y: Double, width w: Double, height h: Double, radius: Double, fill: Color?, stroke: (Color, Double)? = nil) {
        let r = min(radius, w / 2, h / 2)
        cairo_new_path(context)
        cairo_arc(context, x + w - r, y + r, r, -Double.pi / 2, 0)
        cairo_arc(context, x + w - r, y + h - r, r, 0, Double.pi / 2)
        cairo_arc(context, x + r, y + h - r, r, Double.pi / 2, Double.pi)
        cairo_arc(context, x + r, y + r, r, Double.pi, 3 * Double.pi / 2)
        cairo_close_path(context)
        if let fill {
            set(fill)
            stroke == nil ? cairo_fill(context) : cairo_fill_preserve(context)
        }
        if let (color, lineWidth) = stroke {
            set(color)
            cairo_set_line_width(context, lineWidth)
            cairo_stroke(context)
        }
    }

    /// Text wrapped at word boundaries within `width`, its top at `y`; the height it took. `font` is a Pango font
    /// description ("Noto Sans Bold 48"); Pango falls back per character (emoji from Noto Color Emoji).
    @discardableResult
    public func text(_ text: String, font: String, x: Double, y: Double, width w: Double, color: Color, alignment: Alignment = .left,
                     lineSpacing: Double = 1.0) -> Double {
        let layout = makeLayout(text, font: font, width: w, alignment: alignment, lineSpacing: lineSpacing)
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        set(color)
        cairo_move_to(context, x, y)
        pango_cairo_show_layout(context, layout)
        return Self.logicalHeight(layout)
    }

    /// The height `text` takes in `font` at `width`, drawing nothing.
    public func measure(_ text: String, font: String, width w: Double, lineSpacing: Double = 1.0) -> Double {
        let layout = makeLayout(text, font: font, width: w, alignment: .left, lineSpacing: lineSpacing)
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        return Self.logicalHeight(layout)
    }

    /// The width one line of `text` takes in `font`, drawing nothing.
    public func lineWidth(_ text: String, font: String) -> Double {
        let layout = makeLayout(text, font: font, width: -1, alignment: .left, lineSpacing: 1.0)
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_extents(layout, &ink, &logical)
        return Double(logical.width) / Double(PANGO_SCALE)
    }

    /// The largest size from `sizes` (largest first) at which `text` in `family` fits `width` × `maxHeight`, or the
    /// smallest; with the height it takes.
    public func fittingFont(_ text: String, family: String, sizes: [Double], width w: Double, maxHeight: Double,
                            lineSpacing: Double = 1.0) -> (font: String, height: Double) {
        var last = (font: "\(family) \(sizes.last ?? 12)", height: 0.0)
        for size in sizes {
            let font = "\(family) \(size)"
            let h = measure(text, font: font, width: w, lineSpacing: lineSpacing)
            last = (font, h)
            if h <= maxHeight { return last }
        }
        return last
    }

    /// Draws an SVG into the square at (`x`, `y`) of side `size`, its aspect kept.
    public func svg(_ svg: String, x: Double, y: Double, size: Double) throws {
        var error: UnsafeMutablePointer<GError>?
        let bytes = Array(svg.utf8)
        guard let handle = bytes.withUnsafeBufferPointer({ rsvg_handle_new_from_data($0.baseAddress, gsize($0.count), &error) }) else {
            defer { if let error { g_error_free(error) } }
            throw RenderingError("the SVG does not parse: \(error.map { String(cString: $0.pointee.message) } ?? "unknown")")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(handle)) }
        var viewport = RsvgRectangle(x: x, y: y, width: size, height: size)
        guard rsvg_handle_render_document(handle, context, &viewport, &error) != 0 else {
            defer { if let error { g_error_free(error) } }
            throw RenderingError("the SVG does not render: \(error.map { String(cString: $0.pointee.message) } ?? "unknown")")
        }
    }

    /// Decodes a picture (PNG or JPEG, by gdk-pixbuf) and draws it to cover the square at (`x`, `y`) of side `size`,
    /// centred and cropped to keep its aspect. Only the decoded pixels reach the canvas: a picture drawn again this
    /// way carries none of the original file's bytes (metadata, trailing data, odd chunks).
    public func picture(_ bytes: [UInt8], x: Double, y: Double, size: Double) throws {
        var error: UnsafeMutablePointer<GError>?
        let loader = gdk_pixbuf_loader_new()
        defer { g_object_unref(UnsafeMutableRawPointer(loader)) }
        let wrote = bytes.withUnsafeBufferPointer { gdk_pixbuf_loader_write(loader, $0.baseAddress, gsize($0.count), &error) }
        // Closed whatever happened (a loader must be), its complaint kept only when the write had none.
        var closeError: UnsafeMutablePointer<GError>?
        let closed = gdk_pixbuf_loader_close(loader, &closeError)
        if let closeError { if error == nil { error = closeError } else { g_error_free(closeError) } }
        guard wrote != 0, closed != 0, let pixbuf = gdk_pixbuf_loader_get_pixbuf(loader) else {
            defer { if let error { g_error_free(error) } }
            throw RenderingError("the picture does not decode: \(error.map { String(cString: $0.pointee.message) } ?? "unknown format")")
        }
        let width = Int(gdk_pixbuf_get_width(pixbuf)), height = Int(gdk_pixbuf_get_height(pixbuf))
        let channels = Int(gdk_pixbuf_get_n_channels(pixbuf)), stride = Int(gdk_pixbuf_get_rowstride(pixbuf))
        guard width > 0, height > 0, gdk_pixbuf_get_bits_per_sample(pixbuf) == 8, channels == 3 || channels == 4,
              let pixels = gdk_pixbuf_read_pixels(pixbuf) else {
            throw RenderingError("the picture is not 8-bit RGB or RGBA")
        }
        // gdk-pixbuf's rows are RGB(A), not premultiplied; Cairo's ARGB32 is premultiplied native-endian words.
        let image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))
        defer { cairo_surface_destroy(image) }
        guard cairo_surface_status(image) == CAIRO_STATUS_SUCCESS, let data = cairo_image_surface_get_data(image) else {
            throw RenderingError("cannot hold a \(width)×\(height) picture")
        }
        let target = Int(cairo_image_surface_get_stride(image))
        cairo_surface_flush(image)
        for row in 0..<height {
            let source = pixels + row * stride
            let line = UnsafeMutableRawPointer(data + row * target).assumingMemoryBound(to: UInt32.self)
            for column in 0..<width {
                let p = source + column * channels
                let alpha = channels == 4 ? UInt32(p[3]) : 255
                let premultiply = { (value: UInt8) in (UInt32(value) * alpha + 127) / 255 }
                line[column] = alpha << 24 | premultiply(p[0]) << 16 | premultiply(p[1]) << 8 | premultiply(p[2])
            }
        }
        cairo_surface_mark_dirty(image)
        let scale = max(size / Double(width), size / Double(height))
        cairo_save(context)
        cairo_rectangle(context, x, y, size, size)
        cairo_clip(context)
        cairo_translate(context, x + (size - Double(width) * scale) / 2, y + (size - Double(height) * scale) / 2)
        cairo_scale(context, scale, scale)
        cairo_set_source_surface(context, image, 0, 0)
        cairo_pattern_set_filter(cairo_get_source(context), CAIRO_FILTER_GOOD)
        cairo_paint(context)
        cairo_restore(context)
    }

    /// The picture as PNG (8-bit RGBA, no text chunks).
    public func png() throws -> Data {
        final class Sink { var data = Data() }
        let sink = Sink()
        let write: cairo_write_func_t = { closure, bytes, length in
            guard let closure, let bytes else { return CAIRO_STATUS_WRITE_ERROR }
            Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue().data.append(bytes, count: Int(length))
            return CAIRO_STATUS_SUCCESS
        }
        cairo_surface_flush(surface)
        let status = withExtendedLifetime(sink) { cairo_surface_write_to_png_stream(surface, write, Unmanaged.passUnretained(sink).toOpaque()) }
        guard status == CAIRO_STATUS_SUCCESS else { throw RenderingError("the PNG could not be written") }
        return sink.data
    }

    private func makeLayout(_ text: String, font: String, width w: Double, alignment: Alignment, lineSpacing: Double) -> OpaquePointer {
        let layout = pango_cairo_create_layout(context)!
        let description = pango_font_description_from_string(font)
        defer { pango_font_description_free(description) }
        pango_layout_set_font_description(layout, description)
        // A negative width: one line, unwrapped (for measuring).
        pango_layout_set_width(layout, w < 0 ? -1 : Int32(w * Double(PANGO_SCALE)))
        pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
        pango_layout_set_alignment(layout, alignment.pango)
        if lineSpacing != 1.0 { pango_layout_set_line_spacing(layout, Float(lineSpacing)) }
        pango_layout_set_text(layout, text, -1)
        return layout
    }

    private static func logicalHeight(_ layout: OpaquePointer) -> Double {
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_extents(layout, &ink, &logical)
        return Double(logical.height) / Double(PANGO_SCALE)
    }
}
