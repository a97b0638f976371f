#!/usr/bin/env python3
"""What storing one cache entry costs the file system of a directory: CPU time per file of creating a
24 KB file (a 512 px JPEG variant's size), writing it and renaming it into place, as the disk tier does.

    python3 Benchmarks/serving/create_cost.py DIR [DIR ...]

Prints one line per DIR: `<dir> <fs type> <microseconds per file>`. Each DIR gets a fresh subdirectory for
FILES (1000) files, removed afterwards.

Why it is measured (Benchmarks/serving/README.md, "Where the servers keep their state"): on this
machine's root file system, an ext4 without a journal whose block groups are churned by builds and tests,
the kernel's inode allocator checks every free inode it meets for a recent deletion (ext4's
recently_deleted(), only on journal-less ext4) and a create costs 60-700 µs of CPU, against about 30 µs on
a fresh journaled ext4 or tmpfs: in a cold serving run that is up to a tenth of a JPEG request.
"""
import os
import sys
import tempfile
import time

FILES = 1000
BODY = b"\xff" * 24 * 1024


def fs_type(path):
    """The type of the file system holding path, from /proc/mounts (the longest mount point above it)."""
    path, best, kind = os.path.realpath(path), "", "?"
    with open("/proc/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            point = fields[1]
            if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
                best, kind = point, fields[2]
    return kind


def cost_us(directory):
    work = tempfile.mkdtemp(prefix="create-cost-", dir=directory)
    try:
        start = time.process_time()
        for i in range(FILES):
            temporary = os.path.join(work, f".{i}.tmp")
            fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            try:
                os.write(fd, BODY)
            finally:
                os.close(fd)
            os.rename(temporary, os.path.join(work, f"{i:032x}"))
        return (time.process_time() - start) / FILES * 1e6
    finally:
        for name in os.listdir(work):
            os.unlink(os.path.join(work, name))
        os.rmdir(work)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for directory in sys.argv[1:]:
        print(f"{directory} {fs_type(directory)} {cost_us(directory):.0f}", flush=True)


if __name__ == "__main__":
    main()
