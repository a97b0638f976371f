#ifndef WEBIMAGE_CCURL_H
#define WEBIMAGE_CCURL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* libcurl (7.88 here, Debian bookworm's libcurl4-openssl-dev) for WebImage's downloader and object
 * store client, in the shape Swift can call: curl_easy_setopt and curl_easy_getinfo are variadic,
 * which Swift cannot call, so every option is set here from one plain struct.
 *
 * What libcurl does, from its manual pages (libcurl-multi(3), libcurl-thread(3), curl_easy_setopt(3)):
 * - Threads: a multi handle and its easy handles may be used from one thread at a time; the only
 *   call allowed from another thread is curl_multi_wakeup(), which ends a curl_multi_poll() wait
 *   at once (a socket pair inside the multi handle). Every callback (header, write, open-socket)
 *   runs on the thread that calls curl_multi_perform(), inside that call. With the threaded
 *   resolver (this build: "AsynchDNS"), name lookups run on curl's own short-lived threads and
 *   never block the perform call. CURLOPT_NOSIGNAL is set: no SIGALRM for time-outs.
 * - Bad input: a malformed answer ends the transfer with CURLE_WEIRD_SERVER_REPLY (or
 *   CURLE_HTTP2/_STREAM), never a crash; bytes past a response's declared end make libcurl close
 *   that connection ("Excess found"), and an idle connection with data or EOF pending is found dead
 *   and closed before reuse: a misbehaving origin's extra bytes can never reach the next answer.
 *   Header lines and the whole head are bounded by libcurl (CURL_MAX_HTTP_HEADER, 100 KiB a line;
 *   and 300 KiB in all for one response since 7.87). Redirects are followed at most MAXREDIRS times
 *   (CURLE_TOO_MANY_REDIRECTS past it), only to the protocols allowed (http, https here).
 * - Returning anything but the length handed in from a header or write callback stops the
 *   transfer with CURLE_WRITE_ERROR; returning CURL_SOCKET_BAD from the open-socket callback makes
 *   libcurl try the next address (CURLE_COULDNT_CONNECT when none is left).
 * - Content codings are decoded only when CURLOPT_ACCEPT_ENCODING is set; the decoded bytes go to
 *   the write callback in pieces of at most CURL_MAX_WRITE_SIZE (16 KiB), so a limit enforced there
 *   bounds an inflating body's memory.
 * - curl_global_init() is not thread-safe: wi_curl_global_init() runs it once (pthread_once).
 *
 * - Reusing a kept-alive connection: libcurl 7.88 checks an idle connection before reuse, but
 *   counts one with bytes waiting as alive (later releases drop it: "input pending"). Those bytes
 *   are an answer nobody asked for, and the next request would read them as its own. So the
 *   open-socket callback tells which connections are new, and the pre-request callback
 *   (CURLOPT_PREREQFUNCTION, right before a request is sent) lets the Swift side look at a reused
 *   one and refuse it (CURL_PREREQFUNC_ABORT), after which the transfer is made again on a fresh
 *   connection (CURLOPT_FRESH_CONNECT).
 *
 * The callbacks are set once (wi_curl_set_callbacks) and get the `context` pointer each transfer
 * was made with. */

typedef struct {
    /* One line of a head, status line and blank end line included, without its CRLF. Returns 0
     * to go on, non-zero to stop the transfer. */
    int (*header)(void *context, const char *line, size_t length);
    /* A piece of the body (decoded, when a content coding is decoded). Returns 0 to go on. */
    int (*body)(void *context, const char *bytes, size_t length);
    /* Whether a connection to `address` may be made: 0 allows it, non-zero refuses it. */
    int (*allow_address)(void *context, const struct sockaddr *address, socklen_t length);
    /* A socket libcurl just made for this transfer (a new connection). */
    void (*opened_socket)(void *context, int socket);
    /* A socket libcurl is about to close (any transfer's: no context, as the connection may
     * outlive the transfer that made it). Called on the thread of the multi handle. */
    void (*closing_socket)(int socket);
    /* Right before the request is sent on the connection from `local_port` to `peer_port` (new
     * or reused; libcurl does not tell the socket here). Returns 0 to send it, non-zero to abort
     * the transfer (CURLE_ABORTED_BY_CALLBACK). */
    int (*before_request)(void *context, int local_port, int peer_port);
} wi_curl_callbacks;

typedef struct {
    const char *url;
    const char *method;            /* "GET", "HEAD", "PUT", "DELETE", "POST" */
    const char *const *headers;    /* "Name: value" lines; "Name:" removes one libcurl adds */
    size_t header_count;
    const void *body;              /* sent as is (PUT, POST); may be NULL */
    size_t body_length;
    long follow_redirects;         /* the most redirects followed; 0: none (the 3xx is the answer) */
    long connect_timeout_ms;       /* 0: libcurl's default (300 s) */
    long total_timeout_ms;         /* 0: none */
    long low_speed_time_s;         /* > 0: stop when under 1 byte/s for this long (stalled) */
    long long max_body_bytes;      /* > 0: refuse a Content-Length over it (CURLE_FILESIZE_EXCEEDED) */
    int decode_content;            /* decode gzip/deflate/br/zstd answers without asking for them */
    const char *ca_file;           /* NULL: the system's */
    const char *ca_path;           /* NULL: the system's */
    const char *proxy;             /* NULL: none (the environment is not read by libcurl here) */
    const char *no_proxy;          /* NULL: none */
    int verify_peer;               /* 0: accept any certificate (allowInvalidSSLCertificates) */
    long buffer_size;              /* the receive buffer; 0: libcurl's default (16 KiB) */
    int fresh_connection;          /* make a new connection, reuse none */
} wi_curl_request;

/* Runs curl_global_init once per process; returns 0 when libcurl is usable. */
int wi_curl_global_init(void);
void wi_curl_set_callbacks(wi_curl_callbacks callbacks);

/* One transfer: an easy handle and the header list it was given (freed together). */
typedef struct wi_curl_transfer wi_curl_transfer;

/* A transfer set up for `request`, calling back with `context`; NULL when an option is refused
 * (the message is written to `error`, at most `error_length` bytes). Everything `request` points
 * to, the body included, is copied: it need not outlive the call. */
wi_curl_transfer *wi_curl_transfer_new(const wi_curl_request *request, void *context, char *error, size_t error_length);
void wi_curl_transfer_free(wi_curl_transfer *transfer);

long wi_curl_redirect_count(wi_curl_transfer *transfer);
/* The URL of the last request (after redirects): valid until the transfer is freed. */
const char *wi_curl_effective_url(wi_curl_transfer *transfer);
const char *wi_curl_strerror(int code);

/* The multi handle: every call but wi_curl_multi_wakeup on its one thread. */
void *wi_curl_multi_new(void);
int wi_curl_multi_add(void *multi, wi_curl_transfer *transfer);
int wi_curl_multi_remove(void *multi, wi_curl_transfer *transfer);
/* Runs what is ready; returns the transfers still running. */
int wi_curl_multi_perform(void *multi);
/* Waits up to `timeout_ms` (less when libcurl has a timer due) for a socket or a wake-up. */
int wi_curl_multi_poll(void *multi, int timeout_ms);
int wi_curl_multi_wakeup(void *multi);
/* The next finished transfer's context, with its result in `result`; NULL when none. */
void *wi_curl_multi_next_done(void *multi, int *result);

/* libcurl's result codes the Swift side tells apart. */
enum {
    WI_CURLE_OK = 0,
    WI_CURLE_UNSUPPORTED_PROTOCOL = 1,
    WI_CURLE_URL_MALFORMAT = 3,
    WI_CURLE_COULDNT_RESOLVE_PROXY = 5,
    WI_CURLE_COULDNT_RESOLVE_HOST = 6,
    WI_CURLE_COULDNT_CONNECT = 7,
    WI_CURLE_WEIRD_SERVER_REPLY = 8,
    WI_CURLE_HTTP2 = 16,
    WI_CURLE_PARTIAL_FILE = 18,
    WI_CURLE_WRITE_ERROR = 23,
    WI_CURLE_OPERATION_TIMEDOUT = 28,
    WI_CURLE_SSL_CONNECT_ERROR = 35,
    WI_CURLE_ABORTED_BY_CALLBACK = 42,
    WI_CURLE_TOO_MANY_REDIRECTS = 47,
    WI_CURLE_GOT_NOTHING = 52,
    WI_CURLE_SEND_ERROR = 55,
    WI_CURLE_RECV_ERROR = 56,
    WI_CURLE_PEER_FAILED_VERIFICATION = 60,
    WI_CURLE_BAD_CONTENT_ENCODING = 61,
    WI_CURLE_FILESIZE_EXCEEDED = 63,
    WI_CURLE_SSL_CACERT_BADFILE = 77,
    WI_CURLE_HTTP2_STREAM = 92,
};

#endif
