#define _GNU_SOURCE
#include "CFileSystem.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

int wi_fsetxattr(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

ssize_t wi_getxattr(const char *path, const char *name, void *value, size_t size) {
    return getxattr(path, name, value, size);
}

ssize_t wi_fgetxattr(int fd, const char *name, void *value, size_t size) {
    return fgetxattr(fd, name, value, size);
}

int wi_touch_access_time_fd(int fd) {
    struct timespec times[2];
    times[0].tv_sec = 0;
    times[0].tv_nsec = UTIME_NOW;
    times[1].tv_sec = 0;
    times[1].tv_nsec = UTIME_OMIT;
    return futimens(fd, times);
}

int wi_touch_access_time(const char *path) {
    struct timespec times[2];
    times[0].tv_sec = 0;
    times[0].tv_nsec = UTIME_NOW;
    times[1].tv_sec = 0;
    times[1].tv_nsec = UTIME_OMIT;
    return utimensat(AT_FDCWD, path, times, 0);
}

static double wi_seconds(struct timespec time) {
    return (double)time.tv_sec + (double)time.tv_nsec / 1e9;
}

int wi_list_directory(const char *directory, void *context, void (*visit)(void *context, const wi_dir_entry *entry)) {
    DIR *dir = opendir(directory);
    if (!dir) return -1;
    int fd = dirfd(dir);
    struct dirent *item;
    while ((item = readdir(dir)) != NULL) {
        if (item->d_type != DT_REG && item->d_type != DT_UNKNOWN) continue;
        struct stat info;
        if (fstatat(fd, item->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISREG(info.st_mode)) continue;
        wi_dir_entry entry = {
            item->d_name, (long long)info.st_blocks * 512, (long long)info.st_size,
            wi_seconds(info.st_atim), wi_seconds(info.st_mtim),
        };
        visit(context, &entry);
    }
    closedir(dir);
    return 0;
}
