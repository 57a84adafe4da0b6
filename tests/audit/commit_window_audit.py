#!/usr/bin/env python3
"""Audit of the runtime's commit windows (runtime/recording/event_writer.hpp, CALLMON_CODE_MARK;
interpose_signal.cpp, in_commit_window): a signal handler that interrupts a hook between a
record's commit (the cursor's xadd, a `callmon_commits` mark) and the encoding state's update
after it (a `callmon_synced` mark) must see that it did, so that a handler leaving by
longjmp makes the writer start a new chunk instead of encoding the next records against a
state the reader has moved past (addresses decoded as 0x0, times hours off). The check
takes the marks from the built library: after each commit, the next synced mark by address
must lie in the same function and within the window in_commit_window accepts.

    commit_window_audit.py LIBCALLMON.so (--window BYTES | --window-source interpose_signal.cpp)
                           [--readelf readelf] [--nm nm]

Commits made with bump_unmarked (nested records, which leave the state alone, and the slow
paths' depth-0 records, covered by ThreadState::unsynced) have no mark and are not checked.
"""
import argparse
import bisect
import re
import subprocess
import sys


def marks(lib, readelf):
    """{section name: sorted code addresses} of the callmon_commits/callmon_synced tables,
    read from their R_X86_64_RELATIVE relocations (the tables hold link-time addresses)."""
    secs = {}
    out = subprocess.run([readelf, "-SW", lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.search(r"\]\s+(callmon_commits|callmon_synced)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+"
                      r"([0-9a-f]+)", line)
        if m:
            secs[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16))
    relocs = []
    out = subprocess.run([readelf, "-rW", lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+R_X86_64_RELATIVE\s+([0-9a-f]+)", line)
        if m:
            relocs.append((int(m.group(1), 16), int(m.group(2), 16)))
    return {name: sorted(v for at, v in relocs if lo <= at < lo + size)
            for name, (lo, size) in secs.items()}


def functions(lib, nm):
    """Sorted (address, name) of the library's code symbols."""
    out = subprocess.run([nm, "-C", lib], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] and parts[1] in "tTwW":
            syms.setdefault(int(parts[0], 16), parts[2])
    return sorted(syms.items())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--window", type=int)
    ap.add_argument("--window-source", help="the source defining kCommitWindowBytes")
    ap.add_argument("--readelf", default="readelf")
    ap.add_argument("--nm", default="nm")
    a = ap.parse_args()
    if a.window_source:
        m = re.search(r"kCommitWindowBytes = (\d+)", open(a.window_source).read())
        if not m:
            print(f"FAIL: no kCommitWindowBytes in {a.window_source}")
            return 1
        a.window = int(m.group(1))
    if a.window is None:
        ap.error("--window or --window-source is required")
    m = marks(a.lib, a.readelf)
    commits, synced = m.get("callmon_commits", []), m.get("callmon_synced", [])
    if not commits or not synced:
        print(f"FAIL: no commit or synced marks found in {a.lib}")
        return 1
    fns = functions(a.lib, a.nm)
    starts = [addr for addr, _ in fns]

    def owner(addr):
        i = bisect.bisect_right(starts, addr) - 1
        return fns[i] if i >= 0 else (0, "?")

    bad = []
    for c in commits:
        i = bisect.bisect_right(synced, c)
        s = synced[i] if i < len(synced) else None
        if s is None or owner(s) != owner(c) or s - c > a.window:
            where = f"{s - c} bytes later in {owner(s)[1][:80]}" if s else "none after it"
            bad.append(f"  commit at {c:#x} in {owner(c)[1][:80]}: next synced mark {where}")
    if bad:
        print(f"FAIL: {len(bad)} of {len(commits)} commit marks have no synced mark in the same "
              f"function within {a.window} bytes (in_commit_window would not see a handler "
              f"there):")
        print("\n".join(bad))
        return 1
    print(f"ok: {len(commits)} commit marks, each followed by its synced mark within "
          f"{a.window} bytes in the same function")
    return 0


if __name__ == "__main__":
    sys.exit(main())
