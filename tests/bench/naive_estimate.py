#!/usr/bin/env python3
"""The naive reference for `ksm-run --estimate`, as the article sketches it.

Reads every page of every private mapping of the given processes through
/proc/PID/mem (file-backed and absent pages included: an absent page reads
as zeros), hashes each page, counts identical contents in a dict, and
predicts pages_shared and pages_sharing as KSM's counters would show them.
Prints one JSON object.  Used by `make bench` only.
"""
import json
import sys
import time

PAGE = 4096
CHUNK = 256 * PAGE
SPECIAL = ("[vsyscall]", "[vvar]", "[vvar_vclock]", "[vdso]")


def regions(pid):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split(maxsplit=5)
            if fields[1][3] != "p":
                continue
            path = fields[5].strip() if len(fields) > 5 else ""
            if path in SPECIAL:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            yield start, end


def pages_of(mem, start, end):
    """Yield each readable page; pages that cannot be read are left out."""
    addr = start
    while addr < end:
        size = min(CHUNK, end - addr)
        try:
            mem.seek(addr)
            data = mem.read(size)
        except OSError:
            data = b""
        if len(data) < size:
            # read what can be read page by page
            for a in range(addr, addr + size, PAGE):
                try:
                    mem.seek(a)
                    page = mem.read(PAGE)
                except OSError:
                    continue
                if len(page) == PAGE:
                    yield page
        else:
            for off in range(0, size, PAGE):
                yield data[off:off + PAGE]
        addr += size


def main():
    pids = [int(p) for p in sys.argv[1].split(",")]
    mps = int(open("/sys/kernel/mm/ksm/max_page_sharing").read())
    counts = {}
    total = 0
    t0 = time.monotonic()
    for pid in pids:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            for start, end in regions(pid):
                for page in pages_of(mem, start, end):
                    h = hash(page)
                    counts[h] = counts.get(h, 0) + 1
                    total += 1
    seconds = time.monotonic() - t0
    shared = sharing = 0
    for n in counts.values():
        if n > 1:
            s = -(-n // mps)
            shared += s
            sharing += n - s
    print(json.dumps({"pages_sharing": sharing, "pages_shared": shared, "pages": total,
                      "seconds": round(seconds, 3),
                      "gib_per_second": round(total * PAGE / seconds / 2**30, 3)}))


if __name__ == "__main__":
    main()
