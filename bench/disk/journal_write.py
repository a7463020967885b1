#!/usr/bin/env python3
"""The journal's write pattern on this disk: page cache, O_DIRECT, and O_DIRECT | O_DSYNC.

The sled store's journal (server/src/store/journal.rs) writes each group as whole 4 KiB blocks
into a file written full of zeros beforehand, durable before the write counts: a pwrite on a
descriptor opened O_DIRECT, then an fdatasync (through the page cache where the file system
takes no direct I/O). O_DIRECT | O_DSYNC, the write and the sync in one call, is timed beside
them: it was no faster here. This times the three ways, alternating, in one run:
`python3 bench/disk/journal_write.py [DIR] [--writes N]`.
`--idle-us 0,100,300` times instead the journal's own way (O_DIRECT, then fdatasync) with the
disk left idle that long before each write, as between the commands of one game: a sync after
a pause is slower than one right after another, which a back-to-back floor does not show.
DIR (default: a new directory under the current one) must be on the disk the data dir uses.
Nothing in the test suite runs this; BENCHMARKS.md quotes it.
"""
import argparse
import mmap
import os
import resource
import tempfile
import time

BLOCK = 4096
FILE_BYTES = 16 << 20


def run(path, flags, writes, idle=0.0):
    # An anonymous mapping is page-aligned, as O_DIRECT wants the buffer to be.
    buf = mmap.mmap(-1, BLOCK)
    buf.write(b"x" * BLOCK)
    fd = os.open(path, os.O_RDWR | flags)
    took = []
    before = resource.getrusage(resource.RUSAGE_SELF)
    for i in range(writes):
        if idle:
            time.sleep(idle)
        start = time.perf_counter()
        os.pwritev(fd, [buf], 2 * BLOCK + (i % (FILE_BYTES // BLOCK - 2)) * BLOCK)
        if not flags & os.O_DSYNC:
            os.fdatasync(fd)
        took.append(time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_SELF)
    os.close(fd)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / writes
    took.sort()
    return took[len(took) // 2], took[int(len(took) * 0.99)], cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", default=None)
    parser.add_argument("--writes", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--idle-us", default=None, help="e.g. 0,100,300")
    args = parser.parse_args()
    if args.idle_us is not None:
        idles = [int(us) for us in args.idle_us.split(",")]
        variants = [(f"O_DIRECT + fdatasync, idle {us:>4} us", os.O_DIRECT, us) for us in idles]
    else:
        variants = [
            ("page cache, pwrite 4 KiB + fdatasync", 0, 0),
            ("O_DIRECT, pwrite 4 KiB + fdatasync  ", os.O_DIRECT, 0),
            ("O_DIRECT | O_DSYNC, pwrite 4 KiB    ", os.O_DIRECT | os.O_DSYNC, 0),
        ]
    with tempfile.TemporaryDirectory(dir=args.dir or ".") as dir:
        path = os.path.join(dir, "journal")
        with open(path, "wb") as f:
            f.write(b"\0" * FILE_BYTES)
            f.flush()
            os.fsync(f.fileno())
        for _ in range(args.rounds):
            for name, flags, idle_us in variants:
                p50, p99, cpu = run(path, flags, args.writes, idle_us / 1e6)
                print(
                    f"{name}: p50 {p50 * 1e3:.3f} ms, "
                    f"p99 {p99 * 1e3:.3f} ms, CPU {cpu * 1e6:.0f} us per write"
                )


if __name__ == "__main__":
    main()
