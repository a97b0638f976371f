// CSVG: a small C layer over libxml2 (2.9.14) and librsvg (2.54.7) with cairo (1.16), Debian 12, for
// WebImage's SVG sources: an imgproxy-style sanitiser, and a rasteriser to straight-alpha RGBA.
//
// What the libraries do, read from their headers and sources (libxml2 parser.h, parserInternals.h,
// xmlsave.h, parser.c; librsvg rsvg.h, rsvg-cairo.h, src/url_resolver.rs, src/xml/xml2_load.rs,
// src/limits.rs, src/filters/, src/text.rs, src/c_api/) and checked by the test harness:
// - libxml2 reports bad input through the parser context, never longjmps, and prints only through its
//   error callbacks: this layer installs a structured error handler per parse (the first error becomes the
//   message) and parses with XML_PARSE_NOERROR | XML_PARSE_NOWARNING. No global handler is touched.
// - Without XML_PARSE_NOENT, DTDLOAD, DTDATTR or DTDVALID, libxml2 loads no external subset or entity,
//   and XML_PARSE_NONET forbids the network anyway. The sanitiser replaces libxml2's entity-declaration
//   handler so that nothing is ever declared, and refuses any document declaring an entity: nothing can
//   be expanded (billion laughs: refused in about 0.1 ms, no memory growth). libxml2's limits stay on (no
//   XML_PARSE_HUGE): 256 levels of elements, 10 MB text nodes.
// - xmlInitParser() runs once (pthread_once) before the first parse; librsvg calls it behind its own
//   once, so going through this layer first means the two never race.
// - librsvg loads with rsvg_handle_new_from_data(): no base URL, no flags. Without a base URL its URL
//   resolver refuses every reference except data: URLs, so it reads no file and no URL (checked with
//   inotify: <image> with file:, absolute and relative paths, url() paint servers, <use>, @import,
//   xi:include, external DTDs and SYSTEM entities open nothing). data: URLs are followed: an <image>'s
//   data is decoded by gdk-pixbuf at the size it declares (a 291-byte SVG nesting a 20000 x 20000 SVG
//   image took 3 GB), and url(data:...) loads a whole other SVG document, unsanitised. The sanitiser
//   deals with both (see csvg_sanitize).
// - librsvg reports bad data as a GError (its message is passed on) and logs only on API misuse. But
//   2.54.7 aborts the whole process (a Rust panic across the C API) on some content, and cairo 1.16
//   segfaults on some paths under huge transforms; all fixed upstream since (2.56-2.59). The sanitiser
//   works around those reproduced here: feConvolveMatrix with 400+ kernel numbers (kernelMatrix
//   dropped), :lang() with a non-language range (#1064: the pseudo-class is renamed, dropping the rule),
//   feTile on an empty region (#928: feTile becomes feOffset, no tiling), text with a font-size past
//   about 2.1 million user units (documents whose text could exceed 1 million px are refused), and deep
//   recursion (below). NOT covered: librsvg's test file bug1118 (cairo_mask segfault under a huge
//   transform) still crashes after sanitising, and more such bugs are likely. Rendering untrusted SVG
//   in-process with this librsvg is not crash-proof: use a separate process, or librsvg 2.59+.
// - Stack: librsvg's rendering recursion takes about 5 KiB per level of nesting (elements, and what
//   <use>/url(#...) references): a <use> chain 1000 deep overflows 8 MiB. So csvg_sanitize,
//   csvg_document_create and csvg_document_render do their work on a thread of this layer's own with a
//   64 MiB stack (address space; only what is used is committed) and join it: each call blocks the
//   calling thread until done (about 50 us of overhead), whatever the caller's stack size. The sanitiser
//   refuses documents nesting deeper than 300 levels. (Destroying a document recurses only as deep as
//   its elements nest, at most 256, and runs on the calling thread.)
// - Threads: librsvg calls nothing of the caller's. It renders on the (layer's) calling thread, except
//   that feGaussianBlur and the lighting filters split rows onto rayon's global pool: one thread per CPU
//   (RAYON_NUM_THREADS), started on first use, kept for the life of the process. Separate documents can be
//   sanitised, created, rendered and destroyed on different threads at the same time (Pango's font map is
//   per thread; fontconfig, GObject and gdk-pixbuf lock internally); one document is used by one thread
//   at a time.
// - Printing: Pango, laying out text scaled past what FreeType takes (about 65000 device pixels, e.g.
//   under transform="scale(1e8)"), prints warnings and criticals to stderr through GLib's structured
//   logging (g_log_set_handler cannot catch those; only g_log_set_writer_func, once per process, which
//   this layer leaves to the application), and cairo then leaks about 650 bytes per such render.
//   Fontconfig reads its configuration and fonts on the first text render. Nothing else printed on any
//   input tried (the fuzz included).
// - Limits librsvg keeps itself: 1,000,000 elements per document, 500,000 references resolved per
//   render (an error, "exceeded more than 500000 referenced elements", after about 2 s). Rendering has no
//   time limit and no cancellation in 2.54 (feMorphology or a 20 x 20 feConvolveMatrix: 2-3 s per
//   megapixel): the caller bounds the output size and the number of renders at once.

#ifndef CSVG_H
#define CSVG_H

#include <stddef.h>
#include <stdint.h>

#if !defined(__clang__)
#define _Nullable
#define _Nonnull
#endif

#if defined(__clang__)
#pragma clang assume_nonnull begin
#endif

/// The most pixels the images embedded in one SVG (data: URLs of <image>/<feImage>, nested SVG images
/// included, at the size gdk-pixbuf decodes them) may declare in total; csvg_sanitize refuses more.
#define CSVG_MAX_EMBEDDED_PIXELS 50000000

#ifdef CSVG_WITH_RSVG
typedef struct CSVGDocument CSVGDocument;
#endif

/// Sanitises an SVG as imgproxy does (processing/svg), and more. Parses `data` with libxml2 (any encoding
/// it detects; no entity is ever expanded, nothing is fetched), then removes:
/// - the elements script, iframe, form (imgproxy), foreignObject, handler (SVG Tiny), any element in the
///   XInclude namespace, and animation elements whose attributeName is (xlink:)href, each with its content;
/// - every attribute whose name starts with "on" (a superset of imgproxy's unsafeAttrs), and xml:base;
/// - href/xlink:href except: on <use> and all other elements, an empty or same-document "#id" value
///   (imgproxy: <use> only); on <image>/<feImage>, "#id" or a data: URL of type image/png, apng, jpeg,
///   jpg, gif, webp or svg+xml (imgproxy also keeps http(s) and relative ones); on <a>, what imgproxy's
///   isSafeHref keeps (http, https, relative, fragment), checked on the value as is and HTML-unescaped,
///   after stripping tabs and newlines as browsers do;
/// - the DOCTYPE, <?xml-stylesheet?> instructions, unresolved entity references;
/// and rewrites: in style sheets and every attribute, url(...) not pointing at "#id" becomes
/// url(#csvg-blocked) (data: kept inside @font-face), @import becomes an unknown at-rule, :lang() is
/// renamed; a <style> element's text and CDATA become one node; nested SVG images are sanitised the same
/// way (3 levels at most) and re-encoded as base64; the librsvg crash workarounds above.
/// Returns 0 with `*out` (free with csvg_free) and `*out_size` = the sanitised SVG in UTF-8 without an XML
/// declaration, or -1 with `message` (of `capacity` bytes) filled: "not XML: ...", "not SVG: ...",
/// "refused: the DTD declares entities", "too large: ..." (embedded images over CSVG_MAX_EMBEDDED_PIXELS),
/// "too deep: ..." (libxml2's 256 levels, or rendering nesting past 300 through references),
/// "unsupported: ..." (text librsvg 2.54 would abort on).
int csvg_sanitize(const uint8_t *data, size_t size, uint8_t *_Nullable *_Nonnull out, size_t *out_size, char *message,
                  size_t capacity);

#ifdef CSVG_WITH_RSVG   // the in-process rasteriser: only in scripts/svg-shim (the package renders in rsvg-convert)
/// Parses `data` (pass csvg_sanitize's output; it is not kept: it may be freed on return) and reports the
/// intrinsic size in pixels at 96 dpi: rsvg_handle_get_intrinsic_size_in_pixels() when width and height
/// are absolute; else, with a viewBox, one absolute dimension and the viewBox's aspect ratio, or the
/// viewBox's size; else 0 x 0 (the caller picks). The size is reported, never used to allocate: a file
/// declaring 1000000 x 1000000 costs nothing here. Returns NULL with `message` filled on bad data.
CSVGDocument *_Nullable csvg_document_create(const uint8_t *data, size_t size, double *width, double *height,
                                             char *message, size_t capacity);

/// Renders the whole document into `output`: `height` rows `row_bytes` apart, each `width` RGBA pixels of
/// 8-bit samples with straight (un-premultiplied) alpha, transparent where nothing is drawn. The document
/// is drawn at its intrinsic size (preserveAspectRatio applied within it) and stretched to `width` x
/// `height`; with no intrinsic size, it is fitted into `width` x `height`. 1...32767 pixels a side;
/// `row_bytes` >= width x 4. Cairo draws straight into `output` when `row_bytes` is a multiple of 4 and
/// `output` 4-byte aligned, else into a surface of its own first. Returns 0, or -1 with `message` filled
/// (including "exceeded more than 500000 referenced elements" and cairo errors such as InvalidSize).
int csvg_document_render(CSVGDocument *doc, int width, int height, uint8_t *output, size_t row_bytes, char *message,
                         size_t capacity);

void csvg_document_destroy(CSVGDocument *_Nullable doc);
#endif

void csvg_free(void *_Nullable p);

#if defined(__clang__)
#pragma clang assume_nonnull end
#endif

#endif
