#!/usr/bin/env bash
# A fresh journaled ext4 for the servers' state in the serving benchmark (webimage's cache directory,
# thumbor's storages): a sparse image file, loop-mounted. Root only (mount, losetup).
#
#   Benchmarks/serving/state_fs.sh mount     # prints the mount point (made afresh each time)
#   Benchmarks/serving/state_fs.sh unmount   # unmounts it and deletes the image
#
# Why: this machine's root file system is an ext4 without a journal whose block groups builds and tests
# churn; there the kernel checks every free inode it meets for a recent deletion before it hands one
# out (recently_deleted(), journal-less ext4 only) and creating a file costs 60-700 µs of CPU, changing
# from one directory to the next (create_cost.py measures it), against about 40 µs on a fresh journaled
# ext4 — what a server's cache disk is. Both caching servers (webimage, thumbor) create a file per cold
# request, so the benchmark gives them a file system that behaves like one.
#
# Where: WEBIMAGE_STATE_IMAGE (default /var/tmp/webimage-bench-state.img, 4 GiB sparse) mounted on
# WEBIMAGE_STATE_DIR (default /tmp/webimage-bench-state). Exits 1 with a message when it cannot (not
# root, no loop device, no mkfs.ext4); the caller then keeps the system temporary directory.
set -euo pipefail
image="${WEBIMAGE_STATE_IMAGE:-/var/tmp/webimage-bench-state.img}"
point="${WEBIMAGE_STATE_DIR:-/tmp/webimage-bench-state}"

unmount() {
    if mountpoint -q "$point"; then umount "$point"; fi
    rm -f "$image"
}

case "${1:-}" in
mount)
    [ "$(id -u)" = 0 ] || { echo "state_fs.sh: needs root (mount)" >&2; exit 1; }
    command -v mkfs.ext4 >/dev/null || { echo "state_fs.sh: no mkfs.ext4 (e2fsprogs)" >&2; exit 1; }
    unmount
    mkdir -p "$point" "$(dirname "$image")"
    truncate -s 4G "$image"
    mkfs.ext4 -q -F -O has_journal "$image" >&2
    if ! mount -o loop "$image" "$point" >&2; then
        rm -f "$image"
        echo "state_fs.sh: could not loop-mount $image" >&2
        exit 1
    fi
    echo "$point"
    ;;
unmount)
    unmount
    ;;
*)
    echo "usage: $0 mount|unmount" >&2
    exit 2
    ;;
esac
