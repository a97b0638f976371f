// CSVG: SVG sanitising (libxml2) and rasterising (librsvg + cairo). See include/csvg.h for the contract.

#include "csvg.h"

// The package builds the sanitiser alone (libxml2 and GLib) and renders in a child process (rsvg-convert);
// scripts/svg-shim builds everything with CSVG_WITH_RSVG, the in-process rasteriser included.
#ifdef CSVG_WITH_RSVG
#include <librsvg/rsvg.h>
#include <cairo.h>
#else
#include <glib.h>
#endif
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlsave.h>

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// MARK: - Common

static void set_message(char *message, size_t capacity, const char *format, ...) {
    if (message == NULL || capacity == 0) {
        return;
    }
    va_list args;
    va_start(args, format);
    vsnprintf(message, capacity, format, args);
    va_end(args);
    // (librsvg's messages end with a newline.)
    size_t length = strlen(message);
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == ' ')) {
        message[--length] = '\0';
    }
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libraries(void) {
    // libxml2 2.9 wants xmlInitParser() once, before any thread parses. librsvg calls it behind its own
    // std::sync::Once; calling it here first (every entry point goes through this) means the two never race.
    xmlInitParser();
}

static void ensure_init(void) {
    pthread_once(&init_once, init_libraries);
}

// librsvg's rendering recursion takes several KiB of stack per nesting level (measured with 2.54.7: a
// <use> chain 1000 deep overflows 8 MiB), so every librsvg call that loads, measures or renders, and the
// sanitiser (recursive tree walks, nested SVG images), runs on a thread of this layer's own with a large
// stack (reserved address space; only what is used is committed), joined before the call returns.
#define CSVG_LIBRSVG_STACK_SIZE ((size_t)64 << 20)

typedef struct stack_job {
    void (*work)(void *);
    void *argument;
} stack_job;

static void *stack_job_main(void *job) {
    ((stack_job *)job)->work(((stack_job *)job)->argument);
    return NULL;
}

static int run_on_large_stack(void (*work)(void *), void *argument) {
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) {
        return -1;
    }
    int rc = pthread_attr_setstacksize(&attributes, CSVG_LIBRSVG_STACK_SIZE);
    stack_job job = {work, argument};
    pthread_t thread;
    if (rc == 0) {
        rc = pthread_create(&thread, &attributes, stack_job_main, &job);
    }
    pthread_attr_destroy(&attributes);
    if (rc != 0) {
        return -1;
    }
    pthread_join(thread, NULL);
    return 0;
}

void csvg_free(void *_Nullable p) {
    free(p);
}

// MARK: - Sanitiser: URL checks

static char *copy_string(const char *s) {
    size_t length = strlen(s) + 1;
    char *copy = malloc(length);
    if (copy != NULL) {
        memcpy(copy, s, length);
    }
    return copy;
}

// The local part of a (possibly prefixed, possibly unbound) XML name: what follows the last ':'.
static const char *local_part(const char *name) {
    const char *colon = strrchr(name, ':');
    return colon != NULL ? colon + 1 : name;
}

// Appends the UTF-8 encoding of `cp` to `out` (which has room for 4 more bytes).
static size_t put_utf8(unsigned char *out, unsigned long cp) {
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

typedef struct named_reference {
    const char *name;
    const char *text;
    int legacy; // also recognised without the ';' (as HTML does)
} named_reference;

// The HTML named character references that decode to ASCII (every character a URL scheme, a colon or the
// whitespace browsers strip could be spelled with), plus the no-break spaces. Anything else written as a
// named reference is caught by the rule in href_scheme_region_has_ampersand().
static const named_reference named_references[] = {
    {"Tab", "\t", 0}, {"NewLine", "\n", 0}, {"excl", "!", 0}, {"quot", "\"", 1}, {"QUOT", "\"", 1},
    {"num", "#", 0}, {"dollar", "$", 0}, {"percnt", "%", 0}, {"amp", "&", 1}, {"AMP", "&", 1},
    {"apos", "'", 0}, {"lpar", "(", 0}, {"rpar", ")", 0}, {"ast", "*", 0}, {"midast", "*", 0},
    {"plus", "+", 0}, {"comma", ",", 0}, {"period", ".", 0}, {"sol", "/", 0}, {"colon", ":", 0},
    {"semi", ";", 0}, {"lt", "<", 1}, {"LT", "<", 1}, {"equals", "=", 0}, {"gt", ">", 1}, {"GT", ">", 1},
    {"quest", "?", 0}, {"commat", "@", 0}, {"lsqb", "[", 0}, {"lbrack", "[", 0}, {"bsol", "\\", 0},
    {"rsqb", "]", 0}, {"rbrack", "]", 0}, {"Hat", "^", 0}, {"lowbar", "_", 0}, {"UnderBar", "_", 0},
    {"grave", "`", 0}, {"DiacriticalGrave", "`", 0}, {"lcub", "{", 0}, {"lbrace", "{", 0},
    {"verbar", "|", 0}, {"vert", "|", 0}, {"VerticalLine", "|", 0}, {"rcub", "}", 0}, {"rbrace", "}", 0},
    {"fjlig", "fj", 0}, {"nbsp", "\xC2\xA0", 1}, {"NonBreakingSpace", "\xC2\xA0", 0},
};

// HTML-unescapes `in` (as Go's html.UnescapeString does for imgproxy: numeric references with or without
// ';', the named references above). Returns a malloc'd NUL-terminated string, or NULL when out of memory.
// Every reference is at least 2 bytes long and decodes to at most 4, hence the 2x buffer.
static char *html_unescape(const char *in) {
    size_t length = strlen(in);
    unsigned char *out = malloc(length * 2 + 1);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    size_t i = 0;
    while (i < length) {
        if (in[i] != '&') {
            out[o++] = (unsigned char)in[i++];
            continue;
        }
        size_t j = i + 1;
        if (j < length && in[j] == '#') {
            j++;
            int hex = 0;
            if (j < length && (in[j] == 'x' || in[j] == 'X')) {
                hex = 1;
                j++;
            }
            size_t digits_start = j;
            unsigned long cp = 0;
            while (j < length) {
                int d;
                char c = in[j];
                if (c >= '0' && c <= '9') {
                    d = c - '0';
                } else if (hex && c >= 'a' && c <= 'f') {
                    d = c - 'a' + 10;
                } else if (hex && c >= 'A' && c <= 'F') {
                    d = c - 'A' + 10;
                } else {
                    break;
                }
                if (cp <= 0x10FFFF) {
                    cp = cp * (hex ? 16 : 10) + (unsigned long)d;
                }
                j++;
            }
            if (j == digits_start) {
                out[o++] = (unsigned char)in[i++]; // "&#" without digits: literal
                continue;
            }
            if (j < length && in[j] == ';') {
                j++;
            }
            if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                cp = 0xFFFD;
            }
            o += put_utf8(out + o, cp);
            i = j;
            continue;
        }
        size_t name_start = j;
        while (j < length && ((in[j] >= 'a' && in[j] <= 'z') || (in[j] >= 'A' && in[j] <= 'Z') ||
                              (in[j] >= '0' && in[j] <= '9'))) {
            j++;
        }
        size_t name_length = j - name_start;
        int semicolon = j < length && in[j] == ';';
        const named_reference *match = NULL;
        size_t match_length = 0;
        for (size_t k = 0; k < sizeof named_references / sizeof named_references[0]; k++) {
            const named_reference *ref = &named_references[k];
            size_t ref_length = strlen(ref->name);
            if (semicolon && ref_length == name_length && memcmp(in + name_start, ref->name, ref_length) == 0) {
                match = ref;
                match_length = ref_length + 1;
                break;
            }
            // Legacy references match as the longest prefix, without ';' ("&ampx" is "&x").
            if (ref->legacy && ref_length <= name_length && ref_length > match_length &&
                memcmp(in + name_start, ref->name, ref_length) == 0 && !(semicolon && ref_length == name_length)) {
                match = ref;
                match_length = ref_length;
            }
        }
        if (match == NULL) {
            out[o++] = (unsigned char)in[i++];
            continue;
        }
        size_t text_length = strlen(match->text);
        memcpy(out + o, match->text, text_length);
        o += text_length;
        i = name_start + match_length;
    }
    out[o] = '\0';
    return (char *)out;
}

// Length of the Unicode white space (Go's unicode.IsSpace) or C0 control at the start of `s`, 0 if none.
static size_t space_prefix(const unsigned char *s, size_t length) {
    if (length == 0) {
        return 0;
    }
    if (s[0] <= 0x20) {
        return 1;
    }
    if (length >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) {
        return 2;
    }
    if (length >= 3) {
        unsigned long cp = ((unsigned long)(s[0] & 0x0F) << 12) | ((unsigned long)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        if ((s[0] & 0xF0) == 0xE0 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 &&
            (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
             cp == 0x205F || cp == 0x3000)) {
            return 3;
        }
    }
    return 0;
}

// Length of such a space ending at s[length-1], 0 if none.
static size_t space_suffix(const unsigned char *s, size_t length) {
    if (length == 0) {
        return 0;
    }
    if (s[length - 1] <= 0x20) {
        return 1;
    }
    if (length >= 2 && space_prefix(s + length - 2, 2) == 2) {
        return 2;
    }
    if (length >= 3 && space_prefix(s + length - 3, 3) == 3) {
        return 3;
    }
    return 0;
}

// Trims white space and C0 controls at both ends of `s` and removes every tab, LF and CR (as browsers'
// URL parser does), in place.
static void normalize_url(char *s) {
    unsigned char *u = (unsigned char *)s;
    size_t length = strlen(s);
    size_t start = 0;
    size_t n;
    while ((n = space_prefix(u + start, length - start)) > 0) {
        start += n;
    }
    while (length > start && (n = space_suffix(u + start, length - start)) > 0) {
        length -= n;
    }
    size_t o = 0;
    for (size_t i = start; i < length; i++) {
        if (u[i] != '\t' && u[i] != '\n' && u[i] != '\r') {
            u[o++] = u[i];
        }
    }
    u[o] = '\0';
}

// The URL scheme (lower-cased into `scheme`, of `capacity` bytes) when `s` starts with
// [a-zA-Z][a-zA-Z0-9+.-]*: (imgproxy's schemeRe). Returns 1 if there is one; a scheme too long for
// `scheme` is returned truncated (it then matches nothing).
static int url_scheme(const char *s, char *scheme, size_t capacity) {
    size_t i = 0;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) {
        return 0;
    }
    while ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
           s[i] == '+' || s[i] == '.' || s[i] == '-') {
        i++;
    }
    if (s[i] != ':') {
        return 0;
    }
    size_t n = i < capacity - 1 ? i : capacity - 1;
    for (size_t k = 0; k < n; k++) {
        char c = s[k];
        scheme[k] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    scheme[n] = '\0';
    return 1;
}

// An '&' left before the first '/', '?' or '#' (where the scheme would be) after unescaping means a
// character reference this layer does not know: the value is refused rather than guessed at.
static int href_scheme_region_has_ampersand(const char *s) {
    for (; *s != '\0' && *s != '/' && *s != '?' && *s != '#'; s++) {
        if (*s == '&') {
            return 1;
        }
    }
    return 0;
}

static const char *const href_schemes[] = {"http", "https", NULL};

// One spelling of a URL against imgproxy's isSafeHref rule: empty, a fragment, scheme-less (relative or
// protocol-relative), or one of `schemes`. `value` is modified (normalised).
static int href_spelling_is_safe(char *value, const char *const *schemes) {
    normalize_url(value);
    if (value[0] == '\0' || value[0] == '#') {
        return 1;
    }
    if (href_scheme_region_has_ampersand(value)) {
        return 0;
    }
    char scheme[32];
    if (!url_scheme(value, scheme, sizeof scheme)) {
        return 1;
    }
    for (size_t i = 0; schemes[i] != NULL; i++) {
        if (strcmp(scheme, schemes[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

// imgproxy's isSafeHref (processing/svg/href.go), made stricter: the value must be safe both as it is
// (what an XML consumer sees) and HTML-unescaped (what a browser sees if the markup is pasted into HTML),
// white space is trimmed after unescaping too, and browsers' tab/newline stripping is applied.
static int is_safe_href(const char *value, const char *const *schemes) {
    char *plain = copy_string(value);
    char *unescaped = html_unescape(value);
    int safe = plain != NULL && unescaped != NULL && href_spelling_is_safe(plain, schemes) &&
               href_spelling_is_safe(unescaped, schemes);
    free(plain);
    free(unescaped);
    return safe;
}

// The data: MIME types an <image> may embed: the formats whose pixel size raster_size() reads from the
// header, and SVG (sized by librsvg). Anything else is dropped: AVIF, BMP, ICO, TGA, XPM... (gdk-pixbuf,
// librsvg's image decoder, would pick the loader by the declared type), and untyped data: URLs (it would
// sniff among all its loaders).
static const char *const image_data_types[] = {"image/png", "image/apng", "image/jpeg", "image/jpg", "image/gif",
                                               "image/webp", "image/svg+xml", NULL};

static int data_url_spelling_is_image(char *value) {
    normalize_url(value);
    if (strncasecmp(value, "data:", 5) != 0) {
        return 0;
    }
    const char *type = value + 5;
    while (*type == ' ') {
        type++;
    }
    size_t n = strcspn(type, ";,");
    while (n > 0 && type[n - 1] == ' ') {
        n--;
    }
    for (size_t i = 0; image_data_types[i] != NULL; i++) {
        if (strlen(image_data_types[i]) == n && strncasecmp(type, image_data_types[i], n) == 0) {
            return 1;
        }
    }
    return 0;
}

static int is_image_data_url(const char *value) {
    char *plain = copy_string(value);
    char *unescaped = html_unescape(value);
    int ok = plain != NULL && unescaped != NULL && data_url_spelling_is_image(plain) &&
             data_url_spelling_is_image(unescaped);
    free(plain);
    free(unescaped);
    return ok;
}

// Empty, or a same-document fragment (imgproxy's rule for <use>: the first character is '#').
static int is_fragment_href(const char *value) {
    return value[0] == '\0' || value[0] == '#';
}


// MARK: - Sanitiser: growing buffer

typedef struct byte_buffer {
    char *data;
    size_t length, capacity;
    int failed;
} byte_buffer;

static void buffer_append(byte_buffer *b, const void *bytes, size_t n) {
    if (b->failed || n == 0) {
        return;
    }
    if (b->length + n + 1 > b->capacity) {
        size_t capacity = b->capacity > 0 ? b->capacity : 64;
        while (capacity < b->length + n + 1) {
            capacity *= 2;
        }
        char *data = realloc(b->data, capacity);
        if (data == NULL) {
            b->failed = 1;
            return;
        }
        b->data = data;
        b->capacity = capacity;
    }
    memcpy(b->data + b->length, bytes, n);
    b->length += n;
    b->data[b->length] = '\0';
}

static void buffer_append_string(byte_buffer *b, const char *s) {
    buffer_append(b, s, strlen(s));
}

// MARK: - Sanitiser: CSS references

// The CSS tokeniser's view (CSS Syntax Level 3), as far as finding url() and @import takes it. Everything
// else is copied unchanged. Where this scanner and a real tokeniser could disagree, it errs towards seeing
// a url() that is not one (rewriting harmless text), never the other way round.

static int css_is_name_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int css_is_name_char(unsigned char c) {
    return css_is_name_start(c) || (c >= '0' && c <= '9') || c == '-';
}

static int css_is_hex(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int css_is_newline(unsigned char c) {
    return c == '\n' || c == '\r' || c == '\f';
}

static int css_is_space(unsigned char c) {
    return c == ' ' || c == '\t' || css_is_newline(c);
}

static int css_starts_escape(const unsigned char *s, size_t i, size_t n) {
    return i < n && s[i] == '\\' && i + 1 < n && !css_is_newline(s[i + 1]);
}

// Consumes the escape at s[i] (a backslash); stores the character it stands for (0x80 for any non-ASCII)
// and returns the index after it.
static size_t css_consume_escape(const unsigned char *s, size_t i, size_t n, unsigned long *cp) {
    i++;
    if (i >= n) {
        *cp = 0xFFFD;
        return i;
    }
    if (css_is_hex(s[i])) {
        unsigned long v = 0;
        size_t digits = 0;
        while (i < n && digits < 6 && css_is_hex(s[i])) {
            unsigned char c = s[i];
            v = v * 16 + (unsigned long)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
            i++;
            digits++;
        }
        if (i < n && css_is_space(s[i])) {
            i += (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
        }
        *cp = v;
        return i;
    }
    *cp = s[i] < 0x80 ? s[i] : 0x80;
    i++;
    while (i < n && (s[i] & 0xC0) == 0x80) {
        i++;
    }
    return i;
}

static int css_starts_ident(const unsigned char *s, size_t i, size_t n) {
    if (i >= n) {
        return 0;
    }
    if (s[i] == '-') {
        return i + 1 < n && (css_is_name_start(s[i + 1]) || s[i + 1] == '-' || css_starts_escape(s, i + 1, n));
    }
    return css_is_name_start(s[i]) || css_starts_escape(s, i, n);
}

// Consumes a name at s[i]; `name` gets it lower-cased (ASCII only; anything else becomes '?', and a
// name too long is cut short, so it matches nothing). Returns the index after it.
static size_t css_consume_name(const unsigned char *s, size_t i, size_t n, char *name, size_t capacity) {
    size_t length = 0;
    int overflow = 0;
    while (i < n) {
        unsigned long cp;
        if (css_starts_escape(s, i, n)) {
            i = css_consume_escape(s, i, n, &cp);
        } else if (css_is_name_char(s[i])) {
            cp = s[i] < 0x80 ? s[i] : 0x80;
            i++;
        } else {
            break;
        }
        char c = cp < 0x80 ? (char)((cp >= 'A' && cp <= 'Z') ? cp + 32 : cp) : '?';
        if (length + 1 < capacity) {
            name[length++] = c;
        } else {
            overflow = 1;
        }
    }
    name[length] = '\0';
    if (overflow && capacity > 0) {
        name[0] = '?';
    }
    return i;
}

// Skips the string starting at s[i] (a quote). An unescaped newline ends it, as in CSS.
static size_t css_skip_string(const unsigned char *s, size_t i, size_t n) {
    unsigned char quote = s[i++];
    while (i < n) {
        if (s[i] == quote) {
            return i + 1;
        }
        if (css_is_newline(s[i])) {
            return i;
        }
        if (s[i] == '\\' && i + 1 < n) {
            i += (s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n') ? 3 : 2;
            continue;
        }
        i++;
    }
    return n;
}

// Reads the argument of url( starting at s[i] (just after the parenthesis) into `target` (decoded,
// without surrounding white space), and returns the index after the closing parenthesis (n if none).
static size_t css_url_argument(const unsigned char *s, size_t i, size_t n, byte_buffer *target) {
    while (i < n && css_is_space(s[i])) {
        i++;
    }
    if (i < n && (s[i] == '"' || s[i] == '\'')) {
        unsigned char quote = s[i++];
        while (i < n && s[i] != quote && !css_is_newline(s[i])) {
            if (s[i] == '\\' && i + 1 < n && css_is_newline(s[i + 1])) {
                i += 2;
                continue;
            }
            if (css_starts_escape(s, i, n)) {
                unsigned long cp;
                i = css_consume_escape(s, i, n, &cp);
                unsigned char utf8[4];
                buffer_append(target, utf8, put_utf8(utf8, cp <= 0x10FFFF ? cp : 0xFFFD));
                continue;
            }
            buffer_append(target, s + i, 1);
            i++;
        }
    } else {
        while (i < n && s[i] != ')' && !css_is_space(s[i])) {
            if (css_starts_escape(s, i, n)) {
                unsigned long cp;
                i = css_consume_escape(s, i, n, &cp);
                unsigned char utf8[4];
                buffer_append(target, utf8, put_utf8(utf8, cp <= 0x10FFFF ? cp : 0xFFFD));
                continue;
            }
            buffer_append(target, s + i, 1);
            i++;
        }
    }
    // Whatever else comes (white space, a bad URL's remnants) up to the closing parenthesis.
    while (i < n && s[i] != ')') {
        if (s[i] == '\\' && i + 1 < n) {
            i += 2;
            continue;
        }
        i++;
    }
    return i < n ? i + 1 : n;
}

#define CSS_BLOCKED_URL "url(#csvg-blocked)"

// Rewrites CSS text (a <style> sheet or a presentation/style attribute): every url() whose target is not
// a same-document fragment becomes url(#csvg-blocked) (a missing reference: what librsvg without a base
// URL makes of every external one anyway, except data: documents, which it would load unsanitised), but
// for data: URLs inside @font-face blocks (fonts; librsvg ignores @font-face); every @import becomes
// an unknown at-rule; :lang() is renamed (see below). `on_fragment` (may be NULL) is told every
// url(#id) kept. Returns a malloc'd rewritten text, or NULL when nothing changed or on no memory
// (*failed set).
typedef void (*fragment_callback)(void *context, const char *id);

static char *rewrite_css(const char *text, size_t n, int *failed, fragment_callback on_fragment, void *fragment_context) {
    const unsigned char *s = (const unsigned char *)text;
    byte_buffer out = {0};
    size_t copied = 0;
    size_t i = 0;
    int depth = 0, font_face_depth = 0, pending_font_face = 0, changed = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
                i++;
            }
            i = i < n ? i + 2 : n;
            continue;
        }
        if (c == '"' || c == '\'') {
            i = css_skip_string(s, i, n);
            continue;
        }
        if (c == '{') {
            depth++;
            if (pending_font_face) {
                font_face_depth = depth;
                pending_font_face = 0;
            }
            i++;
            continue;
        }
        if (c == '}') {
            if (depth == font_face_depth) {
                font_face_depth = 0;
            }
            if (depth > 0) {
                depth--;
            }
            i++;
            continue;
        }
        if (c == ';') {
            pending_font_face = 0;
            i++;
            continue;
        }
        if (c == '@' && css_starts_ident(s, i + 1, n)) {
            char name[16];
            size_t end = css_consume_name(s, i + 1, n, name, sizeof name);
            if (strcmp(name, "import") == 0) {
                buffer_append(&out, s + copied, i - copied);
                buffer_append_string(&out, "@csvg-blocked-import");
                copied = end;
                changed = 1;
            } else if (strcmp(name, "font-face") == 0) {
                pending_font_face = 1;
            }
            i = end;
            continue;
        }
        if (css_starts_ident(s, i, n)) {
            char name[8];
            size_t end = css_consume_name(s, i, n, name, sizeof name);
            if (strcmp(name, "url") == 0 && end < n && s[end] == '(') {
                byte_buffer target = {0};
                size_t close = css_url_argument(s, end + 1, n, &target);
                const char *t = target.data != NULL ? target.data : "";
                int allowed = !target.failed && (t[0] == '#' || (font_face_depth > 0 && strncasecmp(t, "data:", 5) == 0));
                if (target.failed) {
                    out.failed = 1;
                }
                if (allowed && t[0] == '#' && on_fragment != NULL) {
                    on_fragment(fragment_context, t + 1);
                }
                free(target.data);
                if (!allowed) {
                    buffer_append(&out, s + copied, i - copied);
                    buffer_append_string(&out, CSS_BLOCKED_URL);
                    copied = close;
                    changed = 1;
                }
                i = close;
                continue;
            }
            // librsvg 2.54 panics (aborting the process) on :lang() with an argument that is not a
            // language range (#1064, fixed in 2.58): the pseudo-class is renamed, which drops the rule.
            if (strcmp(name, "lang") == 0 && end < n && s[end] == '(' && i > 0 && s[i - 1] == ':') {
                buffer_append(&out, s + copied, i - copied);
                buffer_append_string(&out, "csvg-blocked-lang");
                copied = end;
                changed = 1;
            }
            i = end;
            continue;
        }
        i++;
    }
    if (!changed || out.failed) {
        *failed = out.failed;
        free(out.data);
        return NULL;
    }
    buffer_append(&out, s + copied, n - copied);
    if (out.failed) {
        *failed = 1;
        free(out.data);
        return NULL;
    }
    return out.data;
}

// MARK: - Sanitiser: embedded images

// What librsvg would decode for an <image>/<feImage> data: URL, sized before it does: rasters by their
// headers (gdk-pixbuf allocates the whole image at its declared size), SVG documents by sanitising them in
// turn (this layer's rules, recursively) and asking librsvg for the size gdk-pixbuf's SVG loader renders
// them at.

#define CSVG_MAX_NESTED_SVG 3

// How deep librsvg may have to recurse to render a document: element nesting, plus, through every
// reference (href="#id", url(#id)), the depth of what is referenced, plus the depth of nested SVG images.
// Measured with 2.54.7: about 5 KiB of stack per level (a <use> chain needs 64 MiB at ~12000 levels), so
// CSVG_LIBRSVG_STACK_SIZE leaves a wide margin; the limit is low mostly because some constructs grow
// superlinearly with depth (200 nested feImage/filter references: 230 MB). Every tree libxml2 accepts
// (at most 256 elements deep) fits, with a little room for references.
#define CSVG_MAX_RENDER_DEPTH 300

typedef struct sanitize_context {
    int depth; // of nested SVG documents
    double embedded_pixels;
    int too_large;
    char too_large_message[160];
    int out_of_memory;
    // The document being sanitised: render depth added by the nested SVG images of its elements.
    GHashTable *extra_depth;
    int document_depth; // set by sanitize_bytes on success
} sanitize_context;

static int sanitize_bytes(sanitize_context *context, const uint8_t *data, size_t size, uint8_t **out, size_t *out_size,
                          char *message, size_t capacity);

static int base64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// A data: URL's payload: percent-decoded, then forgiving-base64-decoded when the media type ends in
// ";base64" (WHATWG fetch, as librsvg's data-url crate does). `url` is normalised. NULL when malformed.
static uint8_t *decode_data_url(const char *url, size_t *size) {
    const char *comma = strchr(url, ',');
    if (strncasecmp(url, "data:", 5) != 0 || comma == NULL) {
        return NULL;
    }
    const char *meta = url + 5;
    size_t meta_length = (size_t)(comma - meta);
    while (meta_length > 0 && css_is_space((unsigned char)meta[meta_length - 1])) {
        meta_length--;
    }
    int base64 = 0;
    if (meta_length >= 6 && strncasecmp(meta + meta_length - 6, "base64", 6) == 0) {
        size_t k = meta_length - 6;
        while (k > 0 && css_is_space((unsigned char)meta[k - 1])) {
            k--;
        }
        base64 = k > 0 && meta[k - 1] == ';';
    }
    const char *body = comma + 1;
    size_t length = strlen(body);
    uint8_t *bytes = malloc(length + 1);
    if (bytes == NULL) {
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < length; i++) {
        if (body[i] == '%' && i + 2 < length && css_is_hex((unsigned char)body[i + 1]) &&
            css_is_hex((unsigned char)body[i + 2])) {
            char hex[3] = {body[i + 1], body[i + 2], 0};
            bytes[n++] = (uint8_t)strtoul(hex, NULL, 16);
            i += 2;
        } else {
            bytes[n++] = (uint8_t)body[i];
        }
    }
    if (!base64) {
        *size = n;
        return bytes;
    }
    // Forgiving base64: drop ASCII white space, then at most two trailing '=' when the length is a
    // multiple of 4; a remaining length of 1 mod 4 or any other character is an error.
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!css_is_space(bytes[i])) {
            bytes[m++] = bytes[i];
        }
    }
    if (m % 4 == 0 && m > 0 && bytes[m - 1] == '=') {
        m--;
        if (bytes[m - 1] == '=') {
            m--;
        }
    }
    if (m % 4 == 1) {
        free(bytes);
        return NULL;
    }
    size_t o = 0;
    unsigned long accumulator = 0;
    int bits = 0;
    for (size_t i = 0; i < m; i++) {
        int v = base64_value(bytes[i]);
        if (v < 0) {
            free(bytes);
            return NULL;
        }
        accumulator = (accumulator << 6) | (unsigned long)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes[o++] = (uint8_t)(accumulator >> bits);
        }
    }
    *size = o;
    return bytes;
}

static char *base64_encode(const uint8_t *data, size_t size) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((size + 2) / 3 * 4 + 1);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < size; i += 3) {
        unsigned long v = (unsigned long)data[i] << 16;
        if (i + 1 < size) v |= (unsigned long)data[i + 1] << 8;
        if (i + 2 < size) v |= data[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < size ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < size ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static unsigned long be16(const uint8_t *p) { return ((unsigned long)p[0] << 8) | p[1]; }
static unsigned long le16(const uint8_t *p) { return ((unsigned long)p[1] << 8) | p[0]; }
static unsigned long le24(const uint8_t *p) { return le16(p) | ((unsigned long)p[2] << 16); }
static unsigned long be32(const uint8_t *p) { return (be16(p) << 16) | be16(p + 2); }

// The pixel size a raster image declares (PNG/APNG, GIF, JPEG, WebP). 0 when the header is not one of them.
static int raster_size(const uint8_t *d, size_t n, double *width, double *height) {
    if (n >= 24 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(d + 12, "IHDR", 4) == 0) {
        *width = (double)be32(d + 16);
        *height = (double)be32(d + 20);
        return 1;
    }
    if (n >= 10 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0)) {
        *width = (double)le16(d + 6);
        *height = (double)le16(d + 8);
        return 1;
    }
    if (n >= 4 && d[0] == 0xFF && d[1] == 0xD8) {
        size_t i = 2;
        while (i + 1 < n) {
            if (d[i] != 0xFF) {
                return 0;
            }
            unsigned char marker = d[i + 1];
            if (marker == 0xFF) {
                i++; // fill byte
                continue;
            }
            i += 2;
            if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {
                continue;
            }
            if (i + 2 > n) {
                return 0;
            }
            unsigned long length = be16(d + i);
            if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
                if (i + 7 > n) {
                    return 0;
                }
                *height = (double)be16(d + i + 3);
                *width = (double)be16(d + i + 5);
                return 1;
            }
            if (length < 2) {
                return 0;
            }
            i += length;
        }
        return 0;
    }
    if (n >= 30 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0) {
        if (memcmp(d + 12, "VP8X", 4) == 0) {
            *width = (double)(le24(d + 24) + 1);
            *height = (double)(le24(d + 27) + 1);
            return 1;
        }
        if (memcmp(d + 12, "VP8 ", 4) == 0 && d[23] == 0x9D && d[24] == 0x01 && d[25] == 0x2A) {
            *width = (double)(le16(d + 26) & 0x3FFF);
            *height = (double)(le16(d + 28) & 0x3FFF);
            return 1;
        }
        if (memcmp(d + 12, "VP8L", 4) == 0 && d[20] == 0x2F) {
            unsigned long bits = le24(d + 21) | ((unsigned long)d[24] << 24);
            *width = (double)((bits & 0x3FFF) + 1);
            *height = (double)(((bits >> 14) & 0x3FFF) + 1);
            return 1;
        }
    }
    return 0;
}

#ifdef CSVG_WITH_RSVG
typedef struct nested_size_job {
    const uint8_t *data;
    size_t size;
    int ok;
    double width, height;
} nested_size_job;

static void nested_size_work(void *argument) {
    nested_size_job *job = argument;
    GError *error = NULL;
    RsvgHandle *handle = rsvg_handle_new_from_data(job->data, job->size, &error);
    if (handle == NULL) {
        if (error != NULL) {
            g_error_free(error);
        }
        return;
    }
    RsvgDimensionData dimensions = {0};
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    rsvg_handle_get_dimensions(handle, &dimensions);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    g_object_unref(handle);
    job->width = dimensions.width > 0 ? dimensions.width : 0;
    job->height = dimensions.height > 0 ? dimensions.height : 0;
    job->ok = 1;
}

// The size gdk-pixbuf's SVG loader renders `data` at (rsvg_handle_get_dimensions, librsvg's default DPI).
static int nested_svg_size(const uint8_t *data, size_t size, double *width, double *height) {
    nested_size_job job = {data, size, 0, 0, 0};
    if (run_on_large_stack(nested_size_work, &job) != 0 || !job.ok) {
        return 0;
    }
    *width = job.width;
    *height = job.height;
    return 1;
}
#else
// Without librsvg in the process a nested SVG image cannot be measured: it is removed.
static int nested_svg_size(const uint8_t *data, size_t size, double *width, double *height) {
    (void)data, (void)size, (void)width, (void)height;
    return 0;
}
#endif

static void replace_attribute_value(xmlAttr *attribute, const char *value) {
    xmlNode *text = xmlNewDocText(attribute->doc, (const xmlChar *)value);
    if (text == NULL) {
        return;
    }
    xmlFreeNodeList(attribute->children);
    text->parent = (xmlNode *)attribute;
    attribute->children = text;
    attribute->last = text;
}

static void count_pixels(sanitize_context *context, double width, double height, const char *what) {
    context->embedded_pixels += width * height;
    if (context->embedded_pixels > CSVG_MAX_EMBEDDED_PIXELS && !context->too_large) {
        context->too_large = 1;
        snprintf(context->too_large_message, sizeof context->too_large_message,
                 "too large: an embedded %s of %.0f x %.0f pixels takes the embedded images over %d pixels", what,
                 width, height, CSVG_MAX_EMBEDDED_PIXELS);
    }
}

// Checks an <image>/<feImage> data: URL (already of an allowed type). Returns 1 to keep the attribute
// (possibly rewritten: nested SVG is replaced by its sanitised form), 0 to remove it.
static int check_embedded_image(sanitize_context *context, xmlAttr *attribute, const char *value) {
    char *url = copy_string(value);
    if (url == NULL) {
        context->out_of_memory = 1;
        return 0;
    }
    normalize_url(url);
    size_t size = 0;
    uint8_t *bytes = decode_data_url(url, &size);
    const char *type = url + 5;
    while (*type == ' ') {
        type++;
    }
    int svg = strncasecmp(type, "image/svg+xml", 13) == 0;
    free(url);
    if (bytes == NULL) {
        return 0;
    }
    int keep = 0;
    double width = 0, height = 0;
    if (!svg) {
        if (raster_size(bytes, size, &width, &height) && width > 0 && height > 0) {
            count_pixels(context, width, height, "image");
            keep = 1;
        }
    } else if (context->depth < CSVG_MAX_NESTED_SVG) {
        sanitize_context inner = *context;
        inner.depth++;
        inner.extra_depth = NULL;
        uint8_t *clean = NULL;
        size_t clean_size = 0;
        char ignored[8];
        if (sanitize_bytes(&inner, bytes, size, &clean, &clean_size, ignored, sizeof ignored) == 0) {
            context->embedded_pixels = inner.embedded_pixels;
            if (nested_svg_size(clean, clean_size, &width, &height)) {
                count_pixels(context, width, height, "SVG document");
                if (context->extra_depth != NULL) {
                    g_hash_table_insert(context->extra_depth, attribute->parent,
                                        GINT_TO_POINTER(inner.document_depth));
                }
                char *encoded = base64_encode(clean, clean_size);
                byte_buffer rewritten = {0};
                buffer_append_string(&rewritten, "data:image/svg+xml;base64,");
                if (encoded != NULL) {
                    buffer_append_string(&rewritten, encoded);
                }
                if (encoded != NULL && !rewritten.failed) {
                    replace_attribute_value(attribute, rewritten.data);
                    keep = 1;
                } else {
                    context->out_of_memory = 1;
                }
                free(encoded);
                free(rewritten.data);
            }
            csvg_free(clean);
        } else if (inner.too_large || inner.out_of_memory) {
            context->embedded_pixels = inner.embedded_pixels;
            context->too_large = inner.too_large;
            context->out_of_memory = inner.out_of_memory;
            memcpy(context->too_large_message, inner.too_large_message, sizeof context->too_large_message);
        }
    }
    free(bytes);
    return keep;
}

// MARK: - Sanitiser: tree

typedef struct parse_state {
    int entity_declared;
    int have_error;
    char error[200];
} parse_state;

static int element_is(const xmlNode *node, const char *name) {
    return strcasecmp(local_part((const char *)node->name), name) == 0;
}

static int is_image_element(const xmlNode *element) {
    return element_is(element, "image") || element_is(element, "feImage");
}

static int href_allowed(const xmlNode *element, const char *value) {
    if (element_is(element, "use")) {
        return is_fragment_href(value);
    }
    if (is_image_element(element)) {
        return is_fragment_href(value) || is_image_data_url(value);
    }
    if (element_is(element, "a")) {
        return is_safe_href(value, href_schemes);
    }
    return is_fragment_href(value);
}

static char *attribute_value(xmlAttr *attribute) {
    xmlChar *value = xmlNodeGetContent((xmlNode *)attribute);
    if (value == NULL) {
        return NULL;
    }
    char *copy = copy_string((const char *)value);
    xmlFree(value);
    return copy;
}

// feTurbulence's cost is linear in numOctaves, which librsvg 2.54 does not bound (#1062; 2.58 clamps it
// to 9, the specification's recommendation; more octaves change nothing visible at 8 bits).
#define CSVG_MAX_OCTAVES 9
#define CSVG_MAX_OCTAVES_TEXT "9"

// Whether the element goes, with everything inside it.
static int element_is_removed(xmlNode *element) {
    static const char *const removed[] = {
        "script", "iframe", "form", // imgproxy
        "foreignObject",            // HTML content (and its scripts)
        "handler",                  // SVG Tiny 1.2 script handler
        NULL};
    for (size_t i = 0; removed[i] != NULL; i++) {
        if (element_is(element, removed[i])) {
            return 1;
        }
    }
    if (element->ns != NULL && element->ns->href != NULL &&
        (strcmp((const char *)element->ns->href, "http://www.w3.org/2001/XInclude") == 0 ||
         strcmp((const char *)element->ns->href, "http://www.w3.org/2003/XInclude") == 0)) {
        return 1; // librsvg follows xi:include
    }
    // <set attributeName="href" to="javascript:..."> and friends would rewrite a link after sanitising.
    for (xmlAttr *attribute = element->properties; attribute != NULL; attribute = attribute->next) {
        if (strcmp(local_part((const char *)attribute->name), "attributeName") == 0) {
            char *value = attribute_value(attribute);
            if (value != NULL) {
                normalize_url(value);
                int names_href = strcasecmp(local_part(value), "href") == 0;
                free(value);
                if (names_href) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

// Numbers in an SVG number list (white space or commas between them; "1-1" is two). Stops at the first
// thing that is not a number. The first two are stored.
static size_t count_numbers(const char *s, double *first, double *second) {
    size_t count = 0;
    while (*s != '\0') {
        while (*s == ',' || css_is_space((unsigned char)*s)) {
            s++;
        }
        if (*s == '\0') {
            break;
        }
        char *end = NULL;
        double v = strtod(s, &end);
        if (end == s) {
            break;
        }
        if (count == 0) {
            *first = v;
        } else if (count == 1) {
            *second = v;
        }
        count++;
        s = end;
    }
    return count;
}

// librsvg 2.54 caps kernelMatrix at 400 numbers and then builds an order-sized matrix from them: with
// 400 or more numbers and an order other than 20 x 20 it panics (aborting the process; fixed in 2.56).
static int kernel_matrix_crashes_librsvg(xmlNode *element, const char *value) {
    double a = 0, b = 0;
    size_t n = count_numbers(value, &a, &b);
    if (n < 400) {
        return 0;
    }
    xmlChar *order = xmlGetNoNsProp(element, (const xmlChar *)"order");
    double ox = 3, oy = 3;
    if (order != NULL) {
        size_t k = count_numbers((const char *)order, &ox, &oy);
        if (k == 1) {
            oy = ox;
        }
        xmlFree(order);
    }
    return !(n == 400 && ox == 20 && oy == 20);
}

// Returns 1 when the attribute goes; may rewrite its value.
static int sanitize_attribute(sanitize_context *context, xmlNode *element, xmlAttr *attribute) {
    const char *name = local_part((const char *)attribute->name);
    // Event handlers: every name in imgproxy's unsafeAttrs starts with "on"; so does no other SVG attribute.
    if (strncasecmp(name, "on", 2) == 0) {
        return 1;
    }
    if (attribute->ns != NULL && attribute->ns->href != NULL &&
        strcmp((const char *)attribute->ns->href, (const char *)XML_XML_NAMESPACE) == 0 && strcmp(name, "base") == 0) {
        return 1; // xml:base
    }
    char *value = attribute_value(attribute);
    if (value == NULL) {
        return 0;
    }
    int removed = 0;
    if (attribute->ns == NULL && strcmp((const char *)element->name, "feConvolveMatrix") == 0 &&
        strcmp(name, "kernelMatrix") == 0 && kernel_matrix_crashes_librsvg(element, value)) {
        removed = 1;
    } else if (attribute->ns == NULL && strcmp((const char *)element->name, "feTurbulence") == 0 &&
               strcmp(name, "numOctaves") == 0) {
        char *end = NULL;
        double octaves = strtod(value, &end);
        if (end != value && !(octaves <= CSVG_MAX_OCTAVES)) {
            replace_attribute_value(attribute, CSVG_MAX_OCTAVES_TEXT);
        }
    } else if (strcasecmp(name, "href") == 0) {
        removed = !href_allowed(element, value);
        if (!removed && is_image_element(element) && !is_fragment_href(value)) {
            removed = !check_embedded_image(context, attribute, value);
        }
    } else if (strchr(value, '(') != NULL || strchr(value, '@') != NULL) {
        int failed = 0;
        char *rewritten = rewrite_css(value, strlen(value), &failed, NULL, NULL);
        if (rewritten != NULL) {
            replace_attribute_value(attribute, rewritten);
            free(rewritten);
        }
        if (failed) {
            context->out_of_memory = 1;
        }
    }
    free(value);
    return removed;
}

static void remove_node(xmlNode *node) {
    xmlUnlinkNode(node);
    xmlFreeNode(node);
}

static void collect_text(const xmlNode *node, byte_buffer *text) {
    for (const xmlNode *child = node->children; child != NULL; child = child->next) {
        if ((child->type == XML_TEXT_NODE || child->type == XML_CDATA_SECTION_NODE) && child->content != NULL) {
            buffer_append_string(text, (const char *)child->content);
        } else if (child->type == XML_ELEMENT_NODE) {
            collect_text(child, text);
        }
    }
}

// A style sheet is the concatenation of its text and CDATA (a url( split across the two is one token to
// librsvg): it is rewritten as a whole and put back as one node (CDATA unless it contains "]]>").
static void sanitize_style_element(sanitize_context *context, xmlNode *element) {
    byte_buffer text = {0};
    collect_text(element, &text);
    if (text.failed) {
        context->out_of_memory = 1;
        free(text.data);
        return;
    }
    const char *sheet = text.data != NULL ? text.data : "";
    int failed = 0;
    char *rewritten = rewrite_css(sheet, text.length, &failed, NULL, NULL);
    if (failed) {
        context->out_of_memory = 1;
    }
    int single = element->children == NULL ||
                 (element->children == element->last &&
                  (element->children->type == XML_TEXT_NODE || element->children->type == XML_CDATA_SECTION_NODE));
    if (rewritten != NULL || !single) {
        const char *final = rewritten != NULL ? rewritten : sheet;
        while (element->children != NULL) {
            remove_node(element->children);
        }
        xmlNode *node = strstr(final, "]]>") == NULL
                            ? xmlNewCDataBlock(element->doc, (const xmlChar *)final, (int)strlen(final))
                            : xmlNewDocText(element->doc, (const xmlChar *)final);
        if (node == NULL || xmlAddChild(element, node) == NULL) {
            xmlFreeNode(node);
            context->out_of_memory = 1;
        }
    }
    free(rewritten);
    free(text.data);
}

// Depth is bounded by libxml2's own limit (256 without XML_PARSE_HUGE), so recursion is fine.
static void sanitize_children(sanitize_context *context, xmlNode *parent) {
    xmlNode *child = parent->children;
    while (child != NULL && !context->too_large && !context->out_of_memory) {
        xmlNode *next = child->next;
        switch (child->type) {
        case XML_ELEMENT_NODE:
            if (element_is_removed(child)) {
                remove_node(child);
                break;
            }
            if (strcmp((const char *)child->name, "feTile") == 0) {
                // librsvg 2.54 panics when feTile's input region is empty (#928, fixed in 2.56), which
                // depends on layout: feTile becomes feOffset (same input, result and subregion; no tiling).
                xmlNodeSetName(child, (const xmlChar *)"feOffset");
            }
            for (xmlAttr *attribute = child->properties; attribute != NULL;) {
                xmlAttr *next_attribute = attribute->next;
                if (sanitize_attribute(context, child, attribute)) {
                    xmlRemoveProp(attribute);
                }
                attribute = next_attribute;
            }
            if (element_is(child, "style")) {
                sanitize_style_element(context, child);
            } else {
                sanitize_children(context, child);
            }
            break;
        case XML_PI_NODE:
            if (strcmp((const char *)child->name, "xml-stylesheet") == 0) {
                remove_node(child); // librsvg loads <?xml-stylesheet href?>, browsers too
            }
            break;
        case XML_ENTITY_REF_NODE: // an undeclared entity (only possible with an external subset): dropped
        case XML_DTD_NODE:        // the DOCTYPE (no entities, by then): dropped
            remove_node(child);
            break;
        default:
            break;
        }
        child = next;
    }
}

#if LIBXML_VERSION >= 21200
static void on_parse_error(void *context, const xmlError *error)
#else
static void on_parse_error(void *context, xmlErrorPtr error)
#endif
{
    xmlParserCtxtPtr parser = context;
    parse_state *state = parser->_private;
    if (state == NULL || error == NULL || state->have_error || error->level < XML_ERR_ERROR) {
        return;
    }
    state->have_error = 1;
    const char *text = error->message != NULL ? error->message : "unknown error";
    size_t length = strlen(text);
    while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == ' ')) {
        length--;
    }
    snprintf(state->error, sizeof state->error, "line %d: %.*s", error->line, (int)length, text);
}

// Replaces libxml2's entity declaration handler: nothing is declared, so no reference can ever be
// expanded (an undeclared reference in content is then a well-formedness error), and the document is
// refused. (Stopping the parser here instead, with xmlStopParser(), makes libxml2 2.9 leak the entity's
// value.)
static void on_entity_declaration(void *context, const xmlChar *name, int type, const xmlChar *public_id,
                                  const xmlChar *system_id, xmlChar *content) {
    (void)name, (void)type, (void)public_id, (void)system_id, (void)content;
    xmlParserCtxtPtr parser = context;
    parse_state *state = parser->_private;
    state->entity_declared = 1;
}

static void on_unparsed_entity_declaration(void *context, const xmlChar *name, const xmlChar *public_id,
                                           const xmlChar *system_id, const xmlChar *notation) {
    on_entity_declaration(context, name, 0, public_id, system_id, (xmlChar *)notation);
}

// MARK: - Sanitiser: font sizes

// librsvg 2.54 lays text out with Pango in user units; a computed font-size past about 2.1 million
// (Pango's 22.10 fixed point) makes it panic, aborting the process ("assertion failed: h >= 0.0",
// text.rs; fixed in 2.56). The computed size depends on the cascade (em and % multiply down the tree and
// through <use>), so this layer bounds it from above: every font-size/font declaration of a style sheet is
// assumed to apply to every element, each declaration counts as its largest possible value, and <use>
// passes its size on to what it references. A document whose text could exceed the limit is refused.
#define CSVG_MAX_FONT_SIZE 1000000.0
#define CSVG_FONT_WALK_BUDGET 1000000

typedef struct font_bound {
    double absolute;   // the largest absolute size a declaration can set (px), 0 if none
    double multiplier; // the largest factor of the inherited size it can set, 0 if none
    int present;
} font_bound;

static void font_bound_merge(font_bound *into, font_bound b) {
    if (b.present) {
        into->present = 1;
        into->absolute = fmax(into->absolute, b.absolute);
        into->multiplier = fmax(into->multiplier, b.multiplier);
    }
}

// Bounds a font-size or font value: every number in it is taken as a candidate size with its unit (so a
// font shorthand's weight or line height only makes the bound larger); keywords are at most 1.2 times the
// inherited size or 40px. NaN and infinities give an infinite bound.
static font_bound font_value_bound(const char *value, size_t n) {
    font_bound bound = {0, 1.2, 1}; // larger / smaller / inherit / keywords
    bound.absolute = 40;
    const unsigned char *s = (const unsigned char *)value;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        int starts_number = (c >= '0' && c <= '9') ||
                            ((c == '.' || c == '+' || c == '-') && i + 1 < n &&
                             ((s[i + 1] >= '0' && s[i + 1] <= '9') || s[i + 1] == '.'));
        if (!starts_number) {
            i++;
            continue;
        }
        char number[64];
        size_t k = 0;
        while (i < n && k + 1 < sizeof number &&
               ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '+' || s[i] == '-' ||
                ((s[i] == 'e' || s[i] == 'E') && i + 1 < n &&
                 ((s[i + 1] >= '0' && s[i + 1] <= '9') || s[i + 1] == '+' || s[i + 1] == '-')))) {
            number[k++] = (char)s[i++];
        }
        number[k] = '\0';
        double v = fabs(strtod(number, NULL));
        if (k + 1 >= sizeof number || !isfinite(v)) {
            v = INFINITY;
        }
        char unit[16];
        if (i < n && s[i] == '%') {
            snprintf(unit, sizeof unit, "%%");
            i++;
        } else if (i < n && css_starts_ident(s, i, n)) {
            i = css_consume_name(s, i, n, unit, sizeof unit);
        } else {
            unit[0] = '\0';
        }
        if (unit[0] == '\0' || strcmp(unit, "px") == 0) {
            bound.absolute = fmax(bound.absolute, v);
        } else if (strcmp(unit, "em") == 0 || strcmp(unit, "rem") == 0 || strcmp(unit, "ex") == 0 ||
                   strcmp(unit, "ch") == 0) {
            bound.multiplier = fmax(bound.multiplier, v);
        } else if (strcmp(unit, "%") == 0) {
            bound.multiplier = fmax(bound.multiplier, v / 100);
        } else {
            // in, cm, mm, pt, pc, q, or anything else: at most 96 px per unit (and as a factor, to be safe)
            bound.absolute = fmax(bound.absolute, v * 96);
            bound.multiplier = fmax(bound.multiplier, v);
        }
    }
    return bound;
}

// Bounds the font-size and font declarations of CSS text (a style sheet or a style attribute).
static font_bound css_font_bound(const char *text, size_t n) {
    font_bound bound = {0, 0, 0};
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
                i++;
            }
            i = i < n ? i + 2 : n;
            continue;
        }
        if (s[i] == '"' || s[i] == '\'') {
            i = css_skip_string(s, i, n);
            continue;
        }
        if (css_starts_ident(s, i, n)) {
            char name[16];
            size_t end = css_consume_name(s, i, n, name, sizeof name);
            size_t j = end;
            while (j < n && css_is_space(s[j])) {
                j++;
            }
            if ((strcmp(name, "font-size") == 0 || strcmp(name, "font") == 0) && j < n && s[j] == ':') {
                size_t value_start = j + 1, value_end = value_start;
                while (value_end < n && s[value_end] != ';' && s[value_end] != '}' && s[value_end] != '{') {
                    value_end++;
                }
                font_bound_merge(&bound, font_value_bound(text + value_start, value_end - value_start));
                i = value_end;
                continue;
            }
            i = end;
            continue;
        }
        i++;
    }
    return bound;
}

typedef struct font_state {
    GHashTable *ids;     // id -> element
    GHashTable *walked[2]; // element -> largest inherited size already walked (boxed double); [in text]
    GHashTable *active;  // elements on the current path (reference cycles)
    font_bound sheets;   // every style sheet's declarations
    long budget;
    int exceeded;        // some text could be too large
    int too_complex;     // the budget ran out
} font_state;

static void collect_font_ids(font_state *state, xmlNode *node) {
    for (xmlNode *child = node->children; child != NULL; child = child->next) {
        if (child->type != XML_ELEMENT_NODE) {
            continue;
        }
        xmlChar *id = xmlGetNoNsProp(child, (const xmlChar *)"id");
        if (id == NULL) {
            id = xmlGetNsProp(child, (const xmlChar *)"id", XML_XML_NAMESPACE);
        }
        if (id != NULL && !g_hash_table_contains(state->ids, id)) {
            g_hash_table_insert(state->ids, g_strdup((const char *)id), child);
        }
        xmlFree(id);
        if (element_is(child, "style")) {
            byte_buffer text = {0};
            collect_text(child, &text);
            font_bound_merge(&state->sheets, css_font_bound(text.data != NULL ? text.data : "", text.length));
            free(text.data);
        } else {
            collect_font_ids(state, child);
        }
    }
}

static int is_text_element(const xmlNode *element) {
    return element_is(element, "text") || element_is(element, "tspan") || element_is(element, "textPath") ||
           element_is(element, "tref");
}

static void font_walk(font_state *state, xmlNode *element, double inherited, int in_text) {
    if (state->exceeded || state->too_complex) {
        return;
    }
    if (--state->budget < 0) {
        state->too_complex = 1;
        return;
    }
    in_text = in_text || is_text_element(element);
    double *walked = g_hash_table_lookup(state->walked[in_text], element);
    if ((walked != NULL && inherited <= *walked) || g_hash_table_contains(state->active, element)) {
        return;
    }
    if (walked == NULL) {
        walked = g_new(double, 1);
        g_hash_table_insert(state->walked[in_text], element, walked);
    }
    *walked = inherited;
    font_bound own = {0, 0, 0};
    for (xmlAttr *attribute = element->properties; attribute != NULL; attribute = attribute->next) {
        const char *name = local_part((const char *)attribute->name);
        if (strcmp(name, "font-size") == 0 || strcmp(name, "font") == 0 || strcmp(name, "style") == 0) {
            char *value = attribute_value(attribute);
            if (value != NULL) {
                font_bound_merge(&own, strcmp(name, "style") == 0 ? css_font_bound(value, strlen(value))
                                                                 : font_value_bound(value, strlen(value)));
                free(value);
            }
        }
    }
    double size = inherited;
    font_bound bounds[2] = {own, state->sheets};
    for (int i = 0; i < 2; i++) {
        if (bounds[i].present) {
            size = fmax(size, fmax(bounds[i].absolute, bounds[i].multiplier * inherited));
        }
    }
    if (isnan(size)) {
        size = INFINITY;
    }
    if (in_text && size > CSVG_MAX_FONT_SIZE) {
        state->exceeded = 1;
        return;
    }
    g_hash_table_add(state->active, element);
    for (xmlNode *child = element->children; child != NULL; child = child->next) {
        if (child->type == XML_ELEMENT_NODE) {
            font_walk(state, child, size, in_text);
        }
    }
    // <use> (and <tref>) render what they reference with their own size as the inherited one.
    if (element_is(element, "use") || element_is(element, "tref")) {
        for (xmlAttr *attribute = element->properties; attribute != NULL; attribute = attribute->next) {
            if (strcasecmp(local_part((const char *)attribute->name), "href") == 0) {
                char *value = attribute_value(attribute);
                xmlNode *target = value != NULL && value[0] == '#' ? g_hash_table_lookup(state->ids, value + 1) : NULL;
                if (target != NULL) {
                    font_walk(state, target, size, in_text);
                }
                free(value);
            }
        }
    }
    g_hash_table_remove(state->active, element);
}

// 0 when every text's font size stays under CSVG_MAX_FONT_SIZE, else -1 (*too_complex when the bound
// could not be computed within CSVG_FONT_WALK_BUDGET steps).
static int check_font_sizes(xmlDoc *doc, int *too_complex) {
    xmlNode *root = xmlDocGetRootElement(doc);
    font_state state = {0};
    state.ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    state.walked[0] = g_hash_table_new_full(NULL, NULL, NULL, g_free);
    state.walked[1] = g_hash_table_new_full(NULL, NULL, NULL, g_free);
    state.active = g_hash_table_new(NULL, NULL);
    state.budget = CSVG_FONT_WALK_BUDGET;
    collect_font_ids(&state, (xmlNode *)doc);
    if (root != NULL) {
        font_walk(&state, root, 16, 0);
    }
    g_hash_table_destroy(state.ids);
    g_hash_table_destroy(state.walked[0]);
    g_hash_table_destroy(state.walked[1]);
    g_hash_table_destroy(state.active);
    *too_complex = state.too_complex;
    return state.exceeded || state.too_complex ? -1 : 0;
}

// MARK: - Sanitiser: render depth

typedef struct depth_state {
    GHashTable *ids;        // id -> first element with it (librsvg keeps the first)
    GHashTable *memo;       // element -> its depth (absent: not computed; -1: being computed)
    GHashTable *extra;      // element -> depth of the nested SVG image it shows
    GPtrArray *sheet_ids;   // the url(#id) of the style sheets: any element may be styled with them
    int sheet_depth;        // -1 not computed, -2 being computed
    int path;               // recursion depth of this computation
    int exceeded;
} depth_state;

static void add_sheet_id(void *context, const char *id) {
    g_ptr_array_add(((depth_state *)context)->sheet_ids, g_strdup(id));
}

static void collect_ids(depth_state *state, xmlNode *node) {
    for (xmlNode *child = node->children; child != NULL; child = child->next) {
        if (child->type != XML_ELEMENT_NODE) {
            continue;
        }
        for (xmlAttr *attribute = child->properties; attribute != NULL; attribute = attribute->next) {
            int is_id = strcmp((const char *)attribute->name, "id") == 0 &&
                        (attribute->ns == NULL ||
                         strcmp((const char *)attribute->ns->href, (const char *)XML_XML_NAMESPACE) == 0);
            if (is_id) {
                xmlChar *id = xmlNodeGetContent((xmlNode *)attribute);
                if (id != NULL && !g_hash_table_contains(state->ids, id)) {
                    g_hash_table_insert(state->ids, g_strdup((const char *)id), child);
                }
                xmlFree(id);
            }
        }
        if (element_is(child, "style")) {
            byte_buffer text = {0};
            collect_text(child, &text);
            int failed = 0;
            free(rewrite_css(text.data != NULL ? text.data : "", text.length, &failed, add_sheet_id, state));
            free(text.data);
        } else {
            collect_ids(state, child);
        }
    }
}

static int element_depth(depth_state *state, xmlNode *element);

typedef struct reference_context {
    depth_state *state;
    int *depth;
} reference_context;

static void reference_depth(void *context, const char *id) {
    reference_context *reference = context;
    xmlNode *target = g_hash_table_lookup(reference->state->ids, id);
    if (target != NULL) {
        int d = element_depth(reference->state, target);
        if (d > *reference->depth) {
            *reference->depth = d;
        }
    }
}

static int sheet_depth(depth_state *state) {
    if (state->sheet_depth >= 0) {
        return state->sheet_depth;
    }
    if (state->sheet_depth == -2) {
        return 0; // a cycle: librsvg refuses those references
    }
    state->sheet_depth = -2;
    int depth = 0;
    reference_context reference = {state, &depth};
    for (guint i = 0; i < state->sheet_ids->len; i++) {
        reference_depth(&reference, g_ptr_array_index(state->sheet_ids, i));
    }
    state->sheet_depth = depth;
    return depth;
}

// 1 + the deepest of: the element's children, what it references, its nested SVG image, and what the style
// sheets reference. Stops (setting `exceeded`) past CSVG_MAX_RENDER_DEPTH, so its own recursion is bounded.
static int element_depth(depth_state *state, xmlNode *element) {
    if (state->exceeded) {
        return CSVG_MAX_RENDER_DEPTH + 1;
    }
    gpointer memo = g_hash_table_lookup(state->memo, element);
    if (memo != NULL) {
        int v = GPOINTER_TO_INT(memo);
        return v < 0 ? 0 : v; // being computed: a reference cycle, which librsvg refuses
    }
    if (++state->path > CSVG_MAX_RENDER_DEPTH) {
        state->exceeded = 1;
        state->path--;
        return CSVG_MAX_RENDER_DEPTH + 1;
    }
    g_hash_table_insert(state->memo, element, GINT_TO_POINTER(-1));
    int depth = 0;
    reference_context reference = {state, &depth};
    for (xmlNode *child = element->children; child != NULL; child = child->next) {
        if (child->type == XML_ELEMENT_NODE) {
            int d = element_depth(state, child);
            if (d > depth) {
                depth = d;
            }
        }
    }
    for (xmlAttr *attribute = element->properties; attribute != NULL; attribute = attribute->next) {
        char *value = attribute_value(attribute);
        if (value == NULL) {
            continue;
        }
        if (strcasecmp(local_part((const char *)attribute->name), "href") == 0) {
            if (value[0] == '#') {
                reference_depth(&reference, value + 1);
            }
        } else if (strchr(value, '(') != NULL) {
            int failed = 0;
            free(rewrite_css(value, strlen(value), &failed, reference_depth, &reference));
        }
        free(value);
    }
    if (state->extra != NULL) {
        int d = GPOINTER_TO_INT(g_hash_table_lookup(state->extra, element));
        if (d > depth) {
            depth = d;
        }
    }
    int sheet = sheet_depth(state);
    if (sheet > depth) {
        depth = sheet;
    }
    depth++;
    if (depth > CSVG_MAX_RENDER_DEPTH) {
        state->exceeded = 1;
    }
    g_hash_table_insert(state->memo, element, GINT_TO_POINTER(depth));
    state->path--;
    return depth;
}

// The document's render depth, or -1 past CSVG_MAX_RENDER_DEPTH.
static int render_depth(xmlDoc *doc, GHashTable *extra) {
    xmlNode *root = xmlDocGetRootElement(doc);
    if (root == NULL) {
        return 0;
    }
    depth_state state = {0};
    state.ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    state.memo = g_hash_table_new(NULL, NULL);
    state.extra = extra;
    state.sheet_ids = g_ptr_array_new_with_free_func(g_free);
    state.sheet_depth = -1;
    collect_ids(&state, (xmlNode *)doc);
    int depth = element_depth(&state, root);
    g_hash_table_destroy(state.ids);
    g_hash_table_destroy(state.memo);
    g_ptr_array_free(state.sheet_ids, TRUE);
    return state.exceeded ? -1 : depth;
}

static int sanitize_bytes(sanitize_context *context, const uint8_t *data, size_t size, uint8_t **out, size_t *out_size,
                          char *message, size_t capacity) {
    *out = NULL;
    *out_size = 0;
    if (size == 0) {
        set_message(message, capacity, "not XML: empty");
        return -1;
    }
    if (size > INT_MAX) {
        set_message(message, capacity, "too large: %zu bytes", size);
        return -1;
    }
    xmlParserCtxtPtr parser = xmlCreateMemoryParserCtxt((const char *)data, (int)size);
    if (parser == NULL || parser->sax == NULL) {
        xmlFreeParserCtxt(parser);
        context->out_of_memory = 1;
        set_message(message, capacity, "out of memory");
        return -1;
    }
    parse_state state = {0};
    parser->_private = &state;
    // No entity is ever declared (billion laughs, external entities): see on_entity_declaration().
    parser->sax->entityDecl = on_entity_declaration;
    parser->sax->unparsedEntityDecl = on_unparsed_entity_declaration;
    parser->sax->serror = on_parse_error; // record, never print
    // Without XML_PARSE_NOENT, DTDLOAD, DTDATTR, DTDVALID, XINCLUDE or HUGE: nothing is fetched or expanded,
    // and libxml2's limits (depth 256, 10 MB text nodes, names of 50000 bytes) stay on.
    xmlCtxtUseOptions(parser, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    xmlParseDocument(parser);
    xmlDocPtr doc = parser->myDoc;
    parser->myDoc = NULL;
    int well_formed = parser->wellFormed;
    xmlFreeParserCtxt(parser);

    int result = -1;
    if (state.entity_declared) {
        set_message(message, capacity, "refused: the DTD declares entities");
        goto done;
    }
    if (!well_formed || doc == NULL) {
        set_message(message, capacity, "not XML: %s", state.have_error ? state.error : "malformed");
        goto done;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    if (root == NULL || strcmp(local_part((const char *)root->name), "svg") != 0) {
        set_message(message, capacity, "not SVG: the root element is <%s>",
                    root != NULL ? (const char *)root->name : "(none)");
        goto done;
    }
    context->extra_depth = g_hash_table_new(NULL, NULL);
    sanitize_children(context, (xmlNode *)doc);
    if (context->too_large) {
        set_message(message, capacity, "%s", context->too_large_message);
        goto done;
    }
    if (context->out_of_memory) {
        set_message(message, capacity, "out of memory");
        goto done;
    }
    int depth = render_depth(doc, context->extra_depth);
    if (depth < 0) {
        set_message(message, capacity, "too deep: rendering would nest more than %d levels (elements and references)",
                    CSVG_MAX_RENDER_DEPTH);
        goto done;
    }
    context->document_depth = depth;
    int too_complex = 0;
    if (check_font_sizes(doc, &too_complex) != 0) {
        set_message(message, capacity,
                    too_complex ? "too complex: font sizes could not be bounded"
                                : "unsupported: text could be larger than %.0f px (librsvg 2.54 aborts past about 2 million)",
                    CSVG_MAX_FONT_SIZE);
        goto done;
    }

    xmlBufferPtr buffer = xmlBufferCreate();
    if (buffer == NULL) {
        set_message(message, capacity, "out of memory");
        goto done;
    }
    xmlSaveCtxtPtr save = xmlSaveToBuffer(buffer, "UTF-8", XML_SAVE_NO_DECL);
    long saved = -1;
    if (save != NULL) {
        saved = xmlSaveDoc(save, doc);
        if (xmlSaveClose(save) < 0) {
            saved = -1;
        }
    }
    if (saved < 0) {
        set_message(message, capacity, "cannot serialise the sanitised document");
        xmlBufferFree(buffer);
        goto done;
    }
    size_t length = (size_t)xmlBufferLength(buffer);
    uint8_t *bytes = malloc(length > 0 ? length : 1);
    if (bytes == NULL) {
        set_message(message, capacity, "out of memory");
        xmlBufferFree(buffer);
        goto done;
    }
    memcpy(bytes, xmlBufferContent(buffer), length);
    xmlBufferFree(buffer);
    *out = bytes;
    *out_size = length;
    result = 0;
done:
    if (context->extra_depth != NULL) {
        g_hash_table_destroy(context->extra_depth);
        context->extra_depth = NULL;
    }
    xmlFreeDoc(doc);
    return result;
}

typedef struct sanitize_job {
    const uint8_t *data;
    size_t size;
    uint8_t **out;
    size_t *out_size;
    char *message;
    size_t capacity;
    int result;
} sanitize_job;

static void sanitize_work(void *argument) {
    sanitize_job *job = argument;
    sanitize_context context = {0};
    job->result = sanitize_bytes(&context, job->data, job->size, job->out, job->out_size, job->message, job->capacity);
}

int csvg_sanitize(const uint8_t *data, size_t size, uint8_t *_Nullable *_Nonnull out, size_t *out_size, char *message,
                  size_t capacity) {
    *out = NULL;
    *out_size = 0;
    ensure_init();
    // On the large stack too: with nested SVG images (each sanitised in turn, up to CSVG_MAX_NESTED_SVG deep)
    // the tree walks can recurse a few thousand frames.
    sanitize_job job = {data, size, out, out_size, message, capacity, -1};
    if (run_on_large_stack(sanitize_work, &job) != 0) {
        set_message(message, capacity, "cannot start a thread");
        return -1;
    }
    return job.result;
}

#ifdef CSVG_WITH_RSVG
// MARK: - Rasteriser

struct CSVGDocument {
    RsvgHandle *handle;
    double width, height; // intrinsic size in pixels at 96 dpi, 0 when unknown
};

static double length_to_pixels(RsvgLength length) {
    switch (length.unit) {
    case RSVG_UNIT_PX: return length.length;
    case RSVG_UNIT_IN: return length.length * 96.0;
    case RSVG_UNIT_CM: return length.length * 96.0 / 2.54;
    case RSVG_UNIT_MM: return length.length * 96.0 / 25.4;
    case RSVG_UNIT_PT: return length.length * 96.0 / 72.0;
    case RSVG_UNIT_PC: return length.length * 96.0 / 6.0;
    default: return 0; // percentages, em, ex: not resolvable without a viewport / font
    }
}

static int usable(double v) {
    return isfinite(v) && v > 0;
}

static void intrinsic_size(RsvgHandle *handle, double *width, double *height) {
    double w = 0, h = 0;
    if (rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) && usable(w) && usable(h)) {
        *width = w;
        *height = h;
        return;
    }
    gboolean has_width = FALSE, has_height = FALSE, has_viewbox = FALSE;
    RsvgLength lw = {0, RSVG_UNIT_PERCENT}, lh = {0, RSVG_UNIT_PERCENT};
    RsvgRectangle viewbox = {0, 0, 0, 0};
    rsvg_handle_get_intrinsic_dimensions(handle, &has_width, &lw, &has_height, &lh, &has_viewbox, &viewbox);
    *width = 0;
    *height = 0;
    if (!has_viewbox || !usable(viewbox.width) || !usable(viewbox.height)) {
        return;
    }
    // One absolute dimension and a viewBox: the other follows the viewBox's aspect ratio.
    double pw = length_to_pixels(lw), ph = length_to_pixels(lh);
    if (usable(pw) && !usable(ph)) {
        *width = pw;
        *height = pw * viewbox.height / viewbox.width;
    } else if (usable(ph) && !usable(pw)) {
        *width = ph * viewbox.width / viewbox.height;
        *height = ph;
    } else {
        *width = viewbox.width;
        *height = viewbox.height;
    }
    if (!usable(*width) || !usable(*height)) {
        *width = 0;
        *height = 0;
    }
}

typedef struct create_job {
    const uint8_t *data;
    size_t size;
    CSVGDocument *doc;
    char *message;
    size_t capacity;
} create_job;

static void create_work(void *argument) {
    create_job *job = argument;
    GError *error = NULL;
    // No base file: librsvg then refuses every reference but data: URLs (url_resolver.rs, BaseRequired).
    RsvgHandle *handle = rsvg_handle_new_from_data(job->data, job->size, &error);
    if (handle == NULL) {
        set_message(job->message, job->capacity, "%s",
                    error != NULL && error->message != NULL ? error->message : "cannot load");
        if (error != NULL) {
            g_error_free(error);
        }
        return;
    }
    rsvg_handle_set_dpi(handle, 96.0);
    job->doc->handle = handle;
    intrinsic_size(handle, &job->doc->width, &job->doc->height);
}

CSVGDocument *_Nullable csvg_document_create(const uint8_t *data, size_t size, double *width, double *height,
                                             char *message, size_t capacity) {
    *width = 0;
    *height = 0;
    ensure_init();
    if (size == 0) {
        set_message(message, capacity, "empty data");
        return NULL;
    }
    if (size > INT_MAX) {
        set_message(message, capacity, "too large: %zu bytes", size);
        return NULL;
    }
    CSVGDocument *doc = calloc(1, sizeof *doc);
    if (doc == NULL) {
        set_message(message, capacity, "out of memory");
        return NULL;
    }
    create_job job = {data, size, doc, message, capacity};
    if (run_on_large_stack(create_work, &job) != 0) {
        set_message(message, capacity, "cannot start a thread for librsvg");
    }
    if (doc->handle == NULL) {
        free(doc);
        return NULL;
    }
    *width = doc->width;
    *height = doc->height;
    return doc;
}

// Cairo's ARGB32 (native-endian, premultiplied) to RGBA bytes with straight alpha, rounding to nearest.
static void unpremultiply_row(const uint32_t *in, uint8_t *out, int width) {
    for (int x = 0; x < width; x++) {
        uint32_t p = in[x];
        unsigned a = p >> 24;
        unsigned r = (p >> 16) & 0xFF, g = (p >> 8) & 0xFF, b = p & 0xFF;
        if (a == 0) {
            r = g = b = 0;
        } else if (a < 255) {
            r = (r * 255 + a / 2) / a;
            g = (g * 255 + a / 2) / a;
            b = (b * 255 + a / 2) / a;
            r = r > 255 ? 255 : r;
            g = g > 255 ? 255 : g;
            b = b > 255 ? 255 : b;
        }
        out[4 * x + 0] = (uint8_t)r;
        out[4 * x + 1] = (uint8_t)g;
        out[4 * x + 2] = (uint8_t)b;
        out[4 * x + 3] = (uint8_t)a;
    }
}

typedef struct render_job {
    CSVGDocument *doc;
    cairo_surface_t *surface;
    int width, height;
    int result;
    char *message;
    size_t capacity;
} render_job;

static void render_work(void *argument) {
    render_job *job = argument;
    CSVGDocument *doc = job->doc;
    cairo_t *cr = cairo_create(job->surface);
    RsvgRectangle viewport = {0, 0, job->width, job->height};
    if (doc->width > 0 && doc->height > 0) {
        // Render at the intrinsic size, stretched to the requested one (as rendering at the natural size
        // and resizing the raster would).
        cairo_scale(cr, job->width / doc->width, job->height / doc->height);
        viewport.width = doc->width;
        viewport.height = doc->height;
    }
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
        // (librsvg would only g_warning about a failed context.)
        set_message(job->message, job->capacity, "cairo: %s", cairo_status_to_string(cairo_status(cr)));
    } else {
        GError *error = NULL;
        if (!rsvg_handle_render_document(doc->handle, cr, &viewport, &error)) {
            set_message(job->message, job->capacity, "%s",
                        error != NULL && error->message != NULL ? error->message : "rendering failed");
        } else if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
            set_message(job->message, job->capacity, "cairo: %s", cairo_status_to_string(cairo_status(cr)));
        } else {
            job->result = 0;
        }
        if (error != NULL) {
            g_error_free(error);
        }
    }
    cairo_destroy(cr);
    cairo_surface_flush(job->surface);
}

int csvg_document_render(CSVGDocument *doc, int width, int height, uint8_t *output, size_t row_bytes, char *message,
                         size_t capacity) {
    // Cairo image surfaces are at most 32767 pixels on a side.
    if (width <= 0 || height <= 0 || width > 32767 || height > 32767) {
        set_message(message, capacity, "invalid render size %d x %d", width, height);
        return -1;
    }
    if (row_bytes < (size_t)width * 4) {
        set_message(message, capacity, "row_bytes %zu is less than %d x 4", row_bytes, width);
        return -1;
    }
    // Rendered in place when the caller's rows suit cairo (4-byte aligned, int stride); else through a
    // surface of cairo's own.
    int in_place = row_bytes % 4 == 0 && row_bytes <= INT_MAX && ((uintptr_t)output % 4) == 0;
    cairo_surface_t *surface;
    if (in_place) {
        for (int y = 0; y < height; y++) {
            memset(output + (size_t)y * row_bytes, 0, (size_t)width * 4);
        }
        surface = cairo_image_surface_create_for_data(output, CAIRO_FORMAT_ARGB32, width, height, (int)row_bytes);
    } else {
        surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    }
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        set_message(message, capacity, "cairo: %s", cairo_status_to_string(cairo_surface_status(surface)));
        cairo_surface_destroy(surface);
        return -1;
    }
    render_job job = {doc, surface, width, height, -1, message, capacity};
    if (run_on_large_stack(render_work, &job) != 0) {
        set_message(message, capacity, "cannot start a thread for librsvg");
    }
    if (job.result == 0) {
        const uint8_t *pixels = cairo_image_surface_get_data(surface);
        int stride = cairo_image_surface_get_stride(surface);
        for (int y = 0; y < height; y++) {
            // In place, each row is converted onto itself: pixel x is read before it is written.
            unpremultiply_row((const uint32_t *)(const void *)(pixels + (size_t)y * (size_t)stride),
                              output + (size_t)y * row_bytes, width);
        }
    }
    cairo_surface_destroy(surface);
    return job.result;
}

void csvg_document_destroy(CSVGDocument *_Nullable doc) {
    if (doc == NULL) {
        return;
    }
    if (doc->handle != NULL) {
        g_object_unref(doc->handle);
    }
    free(doc);
}
#endif
