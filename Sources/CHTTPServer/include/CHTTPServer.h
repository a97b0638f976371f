#ifndef WEBIMAGE_CHTTPSERVER_H
#define WEBIMAGE_CHTTPSERVER_H

#include <stddef.h>
#include <stdint.h>

/* An HTTP/1.1 server on GNU libmicrohttpd (0.9.75 here) whose requests are answered later, from
 * any thread: the shape async Swift needs.
 *
 * What libmicrohttpd does, from its manual and microhttpd.h:
 * - Its own threads (MHD_USE_INTERNAL_POLLING_THREAD with a pool of `threads`, epoll) accept,
 *   read and write every connection; the access handler runs on them and must not block.
 * - MHD_suspend_connection() takes a connection out of the event loop; it may only be called from
 *   the access handler. MHD_resume_connection() may be called from any thread at any time (the ITC
 *   pipe wakes the polling thread), after which the handler is called again for the same request.
 *   A suspended connection neither times out nor notices a client that went away; it still counts
 *   against the connection limit. MHD_stop_daemon() with suspended connections is an API violation:
 *   every request must be answered first.
 * - Bad clients: MHD_OPTION_CONNECTION_TIMEOUT closes a connection idle that long (slowloris,
 *   headers that never end); the per-connection memory pool (MHD_OPTION_CONNECTION_MEMORY_LIMIT)
 *   bounds the request line and headers, and a longer one is answered 414 or 431 by MHD itself;
 *   MHD_OPTION_CONNECTION_LIMIT refuses connections past the limit.
 * - The path is handed over without percent-decoding (an unescape callback that keeps it), because
 *   URL signatures are computed over the path as sent.
 *
 * Lifecycle of one request: the handler gets it on an MHD thread, its connection not suspended, and
 * does one of two things before returning:
 * - answers at once: chttp_respond() on this thread. The answer is queued as the access handler
 *   returns: no suspension, no wake-up of the polling thread, no other thread involved;
 * - or calls chttp_suspend(), copies what it needs from `info`, and later calls chttp_respond()
 *   exactly once, from any thread.
 * The request is freed by MHD after the response is sent (or the client is gone); it must not be
 * touched after chttp_respond(). */

typedef struct chttp_server chttp_server;
typedef struct chttp_request chttp_request;

typedef struct {
    const char *method;
    const char *path;           /* raw: not percent-decoded, without the query */
    const char *accept;         /* the Accept header, or NULL */
    const char *if_none_match;  /* the If-None-Match header, or NULL */
    const char *authorization;  /* the Authorization header, or NULL */
    const char *sec_ch_dpr;     /* client hints: Sec-CH-DPR, DPR, Sec-CH-Width, Width; each NULL when absent */
    const char *dpr;
    const char *sec_ch_width;
    const char *width;
} chttp_request_info;

typedef void (*chttp_handler)(void *context, chttp_request *request, const chttp_request_info *info);

/* Called on an MHD thread each time the count of open requests (chttp_open_requests) drops to 0:
 * every answer given has been written, or its client is gone. Must not block. */
typedef void (*chttp_idle_handler)(void *context);

typedef struct {
    const char *bind_address;   /* an IPv4 or IPv6 literal */
    uint16_t port;              /* 0: a free port */
    unsigned threads;           /* MHD's polling threads */
    unsigned connection_limit;
    unsigned timeout_seconds;   /* idle connections are closed after this */
    size_t memory_limit;        /* per connection: request line and headers */
    int realtime_priority;      /* > 0: each MHD thread puts itself in SCHED_RR at this priority
                                 * before its first request (wi_thread_set_realtime); 0: left as made */
    unsigned long slice_ns;     /* > 0: each MHD thread left in the normal class takes this scheduling
                                 * slice before its first request (wi_thread_set_slice); 0: the default */
    int reuse_port;             /* != 0: the listening socket is SO_REUSEPORT (several processes share the
                                 * port, the kernel spreading connections); 0: MHD's default (SO_REUSEADDR) */
} chttp_config;

/* Starts listening; NULL with a message in `error` when it cannot (address in use, bad address).
 * `idle` may be NULL. */
chttp_server *chttp_start(const chttp_config *config, chttp_handler handler, chttp_idle_handler idle, void *context,
                          char *error, size_t error_size);

/* The port it listens on. */
uint16_t chttp_port(const chttp_server *server);

/* Takes the request's connection out of the event loop until chttp_respond(): only from the
 * handler, on its thread, before anything that may answer from another thread. */
void chttp_suspend(chttp_request *request);

/* Answers `request` (status, headers as parallel arrays, body copied) and resumes its connection
 * when it is suspended. Any thread once suspended, else the handler's own; exactly once per request. */
void chttp_respond(chttp_request *request, unsigned status, const char *const *names, const char *const *values,
                   size_t header_count, const uint8_t *body, size_t body_length);

/* MHD threads that have put themselves in SCHED_RR (config.realtime_priority > 0): a thread does
 * it when it sees its first request, so this counts the threads that have served one. */
long chttp_realtime_threads(chttp_server *server);

/* Requests received and not yet completed (answered and written, or their client gone). */
long chttp_open_requests(chttp_server *server);

/* Stops accepting new connections (the listening socket is closed); requests under way go on. */
void chttp_quiesce(chttp_server *server);

/* Stops the daemon and frees it. Every request handed to the handler must have been answered. */
void chttp_stop(chttp_server *server);

#endif
