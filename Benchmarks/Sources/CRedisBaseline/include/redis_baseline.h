#ifndef REDIS_BASELINE_H
#define REDIS_BASELINE_H
#include <stddef.h>

/// The reference for a Redis hit: `count` GETs of `key` one after another on one blocking hiredis
/// connection, each reply's bytes touched and freed. Returns the total nanoseconds, or -1 when a
/// GET fails or answers anything but a string of `expected_bytes`.
long long redis_baseline_get_loop(const char *host, int port, const char *key, int count, size_t expected_bytes);

#endif
