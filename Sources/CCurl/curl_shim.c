#include "CCurl.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct wi_curl_transfer {
    CURL *easy;
    struct curl_slist *headers;   /* libcurl keeps only the pointer: freed with the handle */
    void *context;
};

static wi_curl_callbacks callbacks;
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_result = CURLE_FAILED_INIT;

static void global_init(void) {
    global_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int wi_curl_global_init(void) {
    pthread_once(&global_once, global_init);
    return global_result == CURLE_OK ? 0 : -1;
}

void wi_curl_set_callbacks(wi_curl_callbacks given) {
    callbacks = given;
}

/* libcurl hands header lines with their CRLF (or LF); the Swift side gets them without. */
static size_t on_header(char *data, size_t size, size_t count, void *context) {
    size_t length = size * count, line = length;
    while (line > 0 && (data[line - 1] == '\n' || data[line - 1] == '\r')) line--;
    return callbacks.header(context, data, line) == 0 ? length : 0;
}

static size_t on_body(char *data, size_t size, size_t count, void *context) {
    size_t length = size * count;
    return callbacks.body(context, data, length) == 0 ? length : 0;
}

/* Called for every connection libcurl is about to make (each address of each hop, redirects
 * included), with the address it will connect to: the check happens on the address used, so a
 * name whose answer changes between lookups cannot steer around it. */
static curl_socket_t on_open_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    if (callbacks.allow_address(context, &address->addr, address->addrlen) != 0) return CURL_SOCKET_BAD;
    int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd < 0) return CURL_SOCKET_BAD;
    callbacks.opened_socket(context, fd);
    return fd;
}

static int on_close_socket(void *unused, curl_socket_t fd) {
    (void)unused;
    callbacks.closing_socket((int)fd);
    return close(fd);
}

static int on_before_request(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    (void)primary_ip; (void)local_ip;
    return callbacks.before_request(context, local_port, primary_port) == 0 ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT;
}

#define SET(option, value) do { \
        CURLcode code_ = curl_easy_setopt(easy, option, value); \
        if (code_ != CURLE_OK) { \
            snprintf(error, error_length, "%s: %s", #option, curl_easy_strerror(code_)); \
            goto fail; \
        } \
    } while (0)

wi_curl_transfer *wi_curl_transfer_new(const wi_curl_request *request, void *context, char *error, size_t error_length) {
    if (error_length > 0) error[0] = 0;
    wi_curl_transfer *transfer = calloc(1, sizeof *transfer);
    CURL *easy = curl_easy_init();
    if (transfer == NULL || easy == NULL) {
        snprintf(error, error_length, "out of memory for a transfer");
        free(transfer);
        if (easy != NULL) curl_easy_cleanup(easy);
        return NULL;
    }
    transfer->easy = easy;
    transfer->context = context;
    SET(CURLOPT_URL, request->url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_PRIVATE, transfer);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, context);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, context);
    SET(CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    SET(CURLOPT_OPENSOCKETDATA, context);
    SET(CURLOPT_PREREQFUNCTION, on_before_request);
    SET(CURLOPT_PREREQDATA, context);
    SET(CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
    SET(CURLOPT_CLOSESOCKETDATA, NULL);
    if (request->fresh_connection) SET(CURLOPT_FRESH_CONNECT, 1L);
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);   /* HTTP/2 over TLS when offered, 1.1 in clear */
    if (request->follow_redirects > 0) {
        SET(CURLOPT_FOLLOWLOCATION, 1L);
        SET(CURLOPT_MAXREDIRS, request->follow_redirects);
    }
    if (request->connect_timeout_ms > 0) SET(CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
    if (request->total_timeout_ms > 0) SET(CURLOPT_TIMEOUT_MS, request->total_timeout_ms);
    if (request->low_speed_time_s > 0) {
        SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
        SET(CURLOPT_LOW_SPEED_TIME, request->low_speed_time_s);
    }
    if (request->max_body_bytes > 0) SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)request->max_body_bytes);
    /* Decoding without asking: with ACCEPT_ENCODING set libcurl decodes whatever coding arrives,
     * and the caller's "Accept-Encoding:" line keeps the header from being sent. */
    if (request->decode_content) SET(CURLOPT_ACCEPT_ENCODING, "");
    if (request->ca_file != NULL) SET(CURLOPT_CAINFO, request->ca_file);
    if (request->ca_path != NULL) SET(CURLOPT_CAPATH, request->ca_path);
    SET(CURLOPT_PROXY, request->proxy != NULL ? request->proxy : "");   /* "": none, the environment ignored */
    if (request->no_proxy != NULL) SET(CURLOPT_NOPROXY, request->no_proxy);
    if (!request->verify_peer) {
        SET(CURLOPT_SSL_VERIFYPEER, 0L);
        SET(CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (request->buffer_size > 0) SET(CURLOPT_BUFFERSIZE, request->buffer_size);

    if (strcmp(request->method, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else if (strcmp(request->method, "GET") != 0) {
        SET(CURLOPT_CUSTOMREQUEST, request->method);
        if (request->body != NULL || strcmp(request->method, "PUT") == 0 || strcmp(request->method, "POST") == 0) {
            /* COPYPOSTFIELDS: libcurl keeps its own copy, so the caller's bytes need not outlive the call. */
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_length);
            SET(CURLOPT_COPYPOSTFIELDS, request->body != NULL ? request->body : "");
        }
    }
    for (size_t i = 0; i < request->header_count; i++) {
        struct curl_slist *next = curl_slist_append(transfer->headers, request->headers[i]);
        if (next == NULL) {
            snprintf(error, error_length, "out of memory for the header lines");
            goto fail;
        }
        transfer->headers = next;
    }
    if (transfer->headers != NULL) SET(CURLOPT_HTTPHEADER, transfer->headers);
    return transfer;
fail:
    wi_curl_transfer_free(transfer);
    return NULL;
}

void wi_curl_transfer_free(wi_curl_transfer *transfer) {
    if (transfer == NULL) return;
    curl_easy_cleanup(transfer->easy);
    curl_slist_free_all(transfer->headers);
    free(transfer);
}

long wi_curl_redirect_count(wi_curl_transfer *transfer) {
    long count = 0;
    curl_easy_getinfo(transfer->easy, CURLINFO_REDIRECT_COUNT, &count);
    return count;
}

const char *wi_curl_effective_url(wi_curl_transfer *transfer) {
    char *url = NULL;
    curl_easy_getinfo(transfer->easy, CURLINFO_EFFECTIVE_URL, &url);
    return url;
}

const char *wi_curl_strerror(int code) {
    return curl_easy_strerror((CURLcode)code);
}

void *wi_curl_multi_new(void) {
    CURLM *multi = curl_multi_init();
    if (multi == NULL) return NULL;
    /* HTTP/2 streams share a connection when the origin offers it (libcurl's default since 7.62). */
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    /* Kept-alive connections: libcurl's default is 4 per easy handle added; enough for a server's
     * downloads to many origins without growing past it. */
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 64L);
    return multi;
}

int wi_curl_multi_add(void *multi, wi_curl_transfer *transfer) {
    return (int)curl_multi_add_handle(multi, transfer->easy);
}

int wi_curl_multi_remove(void *multi, wi_curl_transfer *transfer) {
    return (int)curl_multi_remove_handle(multi, transfer->easy);
}

int wi_curl_multi_perform(void *multi) {
    int running = 0;
    curl_multi_perform(multi, &running);
    return running;
}

int wi_curl_multi_poll(void *multi, int timeout_ms) {
    int ready = 0;
    curl_multi_poll(multi, NULL, 0, timeout_ms, &ready);
    return ready;
}

int wi_curl_multi_wakeup(void *multi) {
    return (int)curl_multi_wakeup(multi);
}

void *wi_curl_multi_next_done(void *multi, int *result) {
    int left = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &left)) != NULL) {
        if (message->msg != CURLMSG_DONE) continue;
        wi_curl_transfer *transfer = NULL;
        curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&transfer);
        *result = (int)message->data.result;
        return transfer != NULL ? transfer->context : NULL;
    }
    return NULL;
}
