#pragma once
#include <stddef.h>
#include <sys/types.h>

/// Thin wrappers over POSIX calls the Glibc module does not import cleanly into Swift
/// (extended attributes, UTIME_OMIT, directory enumeration with fstatat).

/// Sets extended attribute `name` on an open file. Returns 0 or -1 with errno set.
int wi_fsetxattr(int fd, const char *name, const void *value, size_t size);

/// Reads extended attribute `name` of `path` into `value` (up to `size` bytes). Returns the length,
/// or -1 with errno set (ENODATA when absent, ENOTSUP when the file system has none, ERANGE when too small).
ssize_t wi_getxattr(const char *path, const char *name, void *value, size_t size);

/// Reads extended attribute `name` of the open file `fd` (as wi_getxattr, without a path lookup).
ssize_t wi_fgetxattr(int fd, const char *name, void *value, size_t size);

/// Sets the access time of the open file `fd` to now, leaving its modification time alone. Returns 0 or -1.
int wi_touch_access_time_fd(int fd);

/// Sets the access time of `path` to now, leaving its modification time alone. Returns 0 or -1.
int wi_touch_access_time(const char *path);

/// One regular file found by wi_list_directory.
typedef struct {
    const char *name;        /// file name (valid during the callback only)
    long long allocated;     /// bytes allocated on disk (st_blocks * 512)
    long long size;          /// logical size in bytes
    double access_time;      /// seconds since 1970
    double modification_time;
} wi_dir_entry;

/// Calls `visit` for each regular file in `directory` (readdir + fstatat, no sorting).
/// Returns 0, or -1 with errno set if the directory cannot be opened.
int wi_list_directory(const char *directory, void *context, void (*visit)(void *context, const wi_dir_entry *entry));
