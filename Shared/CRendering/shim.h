// Cairo (PDF and image surfaces), Pango laid out on Cairo, and librsvg: the one rendering stack of Lantern
// (report PDFs, share cards, pet images). Flags and libraries come from pkg-config (pangocairo, librsvg-2.0).
#include <cairo/cairo.h>
#include <cairo/cairo-pdf.h>
#include <pango/pangocairo.h>
#include <librsvg/rsvg.h>
