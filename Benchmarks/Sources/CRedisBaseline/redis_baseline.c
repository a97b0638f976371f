#include "redis_baseline.h"
#include <hiredis/hiredis.h>
#include <time.h>

long long redis_baseline_get_loop(const char *host, int port, const char *key, int count, size_t expected_bytes) {
    redisContext *context = redisConnect(host, port);
    if (context == NULL || context->err) {
        if (context) redisFree(context);
        return -1;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile unsigned char sink = 0;
    for (int index = 0; index < count; index++) {
        redisReply *reply = redisCommand(context, "GET %s", key);
        if (reply == NULL || reply->type != REDIS_REPLY_STRING || reply->len != expected_bytes) {
            if (reply) freeReplyObject(reply);
            redisFree(context);
            return -1;
        }
        sink ^= (unsigned char)reply->str[reply->len - 1];
        freeReplyObject(reply);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    redisFree(context);
    (void)sink;
    return (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
}
