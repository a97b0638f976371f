#include "CHTTPServer.h"
#include "CSystemTuning.h"
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct chttp_server {
    struct MHD_Daemon *daemon;
    _Atomic long open_requests;   /* request states allocated and not yet completed */
    _Atomic long realtime_threads;   /* MHD threads that put themselves in SCHED_RR */
    int realtime_priority;
    unsigned long slice_ns;
    chttp_handler handler;
    chttp_idle_handler idle;
    void *context;
    uint16_t port;
};

struct chttp_request {
    struct MHD_Connection *connection;
    struct MHD_Response *response;   /* set by chttp_respond, queued on the next handler call */
    unsigned status;
    int dispatched;   /* handed to the handler */
    int suspended;    /* chttp_suspend was called: resumed by chttp_respond */
    int answered;     /* chttp_respond was called */
};

/* Keeps the path as the client sent it. */
static size_t chttp_keep_escaped(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

/* Queues the answer chttp_respond stored; MHD_NO when it could not be made (no memory): MHD then
 * closes the connection. */
static enum MHD_Result chttp_queue_answer(struct MHD_Connection *connection, chttp_request *request) {
    if (request->response == NULL) return MHD_NO;
    enum MHD_Result queued = MHD_queue_response(connection, request->status, request->response);
    MHD_destroy_response(request->response);
    request->response = NULL;
    return queued;
}

/* The server whose scheduling this MHD thread has applied. MHD has no thread-start hook, so a thread
 * applies it itself on its first call; MHD's threads each belong to one daemon. */
static _Thread_local const chttp_server *chttp_tuned_for;

static void chttp_tune_thread(chttp_server *server) {
    if (chttp_tuned_for == server) return;
    chttp_tuned_for = server;
    if (server->realtime_priority > 0 && wi_thread_set_realtime(server->realtime_priority))
        atomic_fetch_add(&server->realtime_threads, 1);
    else if (server->slice_ns > 0) (void)wi_thread_set_slice(server->slice_ns);
}

static enum MHD_Result chttp_access(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                    const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls) {
    (void)version; (void)upload_data;
    chttp_server *server = cls;
    chttp_request *request = *req_cls;
    chttp_tune_thread(server);
    if (request == NULL) {   /* the first call: headers are in */
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        request->connection = connection;
        *req_cls = request;
        atomic_fetch_add(&server->open_requests, 1);
        return MHD_YES;
    }
    if (*upload_data_size != 0) {   /* a body: read and ignored (no route takes one) */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (request->answered) return chttp_queue_answer(connection, request);   /* resumed with the answer */
    if (request->dispatched) return MHD_YES;
    request->dispatched = 1;
    chttp_request_info info = {
        .method = method,
        .path = url,
        .accept = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
        .if_none_match = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH),
        .authorization = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .sec_ch_dpr = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Sec-CH-DPR"),
        .dpr = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "DPR"),
        .sec_ch_width = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Sec-CH-Width"),
        .width = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Width"),
    };
    server->handler(server->context, request, &info);
    /* `suspended` first: once suspended, `answered` is written by the answering thread. */
    if (request->suspended) return MHD_YES;
    if (request->answered) return chttp_queue_answer(connection, request);   /* answered at once */
    return MHD_NO;   /* neither answered nor suspended (a handler's bug): close the connection */
}

static void chttp_completed(void *cls, struct MHD_Connection *connection, void **req_cls, enum MHD_RequestTerminationCode code) {
    (void)connection; (void)code;
    chttp_server *server = cls;
    chttp_request *request = *req_cls;
    if (request == NULL) return;
    if (request->response != NULL) MHD_destroy_response(request->response);
    free(request);
    *req_cls = NULL;
    if (atomic_fetch_sub(&server->open_requests, 1) == 1 && server->idle != NULL) server->idle(server->context);
}

chttp_server *chttp_start(const chttp_config *config, chttp_handler handler, chttp_idle_handler idle, void *context,
                          char *error, size_t error_size) {
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    const char *bind = config->bind_address ? config->bind_address : "127.0.0.1";
    struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
    if (inet_pton(AF_INET, bind, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(config->port);
    } else if (inet_pton(AF_INET6, bind, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(config->port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(error, error_size, "not an IP address: %s", bind);
        return NULL;
    }
    chttp_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    server->handler = handler;
    server->idle = idle;
    server->realtime_priority = config->realtime_priority;
    server->slice_ns = config->slice_ns;
    server->context = context;
    /* LISTENING_ADDRESS_REUSE only when asked: passing 0 would turn MHD's default SO_REUSEADDR off. */
    struct MHD_OptionItem reuse[] = {
        { config->reuse_port ? MHD_OPTION_LISTENING_ADDRESS_REUSE : MHD_OPTION_END, 1, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    server->daemon = MHD_start_daemon(
        flags, config->port, NULL, NULL, chttp_access, server,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(config->threads > 0 ? config->threads : 1),
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)config->connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)config->timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)config->memory_limit,
        MHD_OPTION_UNESCAPE_CALLBACK, chttp_keep_escaped, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, chttp_completed, server,
        MHD_OPTION_ARRAY, reuse,
        MHD_OPTION_END);
    if (server->daemon == NULL) {
        snprintf(error, error_size, "libmicrohttpd could not listen on %s port %u (in use, or not an address of this machine)",
                 bind, (unsigned)config->port);
        free(server);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    server->port = info ? info->port : config->port;
    return server;
}

uint16_t chttp_port(const chttp_server *server) {
    return server->port;
}

long chttp_realtime_threads(chttp_server *server) {
    return atomic_load(&server->realtime_threads);
}

long chttp_open_requests(chttp_server *server) {
    return atomic_load(&server->open_requests);
}

void chttp_suspend(chttp_request *request) {
    request->suspended = 1;
    MHD_suspend_connection(request->connection);
}

void chttp_respond(chttp_request *request, unsigned status, const char *const *names, const char *const *values,
                   size_t header_count, const uint8_t *body, size_t body_length) {
    struct MHD_Response *response =
        MHD_create_response_from_buffer(body_length, (void *)(body_length ? body : (const uint8_t *)""), MHD_RESPMEM_MUST_COPY);
    if (response != NULL) {
        for (size_t i = 0; i < header_count; i++) MHD_add_response_header(response, names[i], values[i]);
    }
    request->status = status;
    request->response = response;
    request->answered = 1;
    if (request->suspended) MHD_resume_connection(request->connection);
}

void chttp_quiesce(chttp_server *server) {
    int socket = MHD_quiesce_daemon(server->daemon);
    if (socket >= 0) close(socket);
}

void chttp_stop(chttp_server *server) {
    if (server == NULL) return;
    MHD_stop_daemon(server->daemon);
    free(server);
}
