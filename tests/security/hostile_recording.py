#!/usr/bin/env python3
"""Promise: a recording from elsewhere is untrusted input (docs/security.md, "What a hostile
recording can do"). Readers (report, replay, info, graph, dump, html, export) of a recording
whose meta file names, as the program and its module, a 4 GiB crafted ELF file (a symbol
table claiming 170 million entries) and whose other process has a 4 GiB (sparse) meta file:
- finish, each within 60 s, using at most 1 GiB of memory (RSS) in all;
- say the oversized meta file is too large instead of reading it;
- write nothing into the recording's directory and run nothing it names (the program it
  names is a script that would leave a marker file).
The files are sparse: the test takes a few MiB of disk. Exit 0 passed, 1 failed."""
import os
import resource
import shutil
import stat
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

HUGE = 4 << 30
failures = []


def craft_huge_elf(src, dst):
    """A copy of the ELF file `src` whose .symtab is moved past its end and stretched to
    fill a HUGE-byte sparse file."""
    shutil.copy(src, dst)
    with open(dst, "r+b") as f:
        data = f.read()
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        start = (len(data) + 4095) & ~4095
        for i in range(shnum):
            at = shoff + i * shentsize
            if struct.unpack_from("<I", data, at + 4)[0] == 2:  # SHT_SYMTAB
                f.seek(at + 0x18)
                f.write(struct.pack("<QQ", start, (HUGE - start) // 24 * 24))
                break
        else:
            common.fail("the fixture has no .symtab to stretch")
        f.truncate(HUGE)


def snapshot(d):
    return {n: (os.stat(os.path.join(d, n)).st_mtime_ns, os.stat(os.path.join(d, n)).st_size)
            for n in os.listdir(d)}


def main():
    a = common.setup()
    w = a.work
    fib = common.build_fib(a.cc, w)
    good = os.path.join(w, "good")
    r = common.run([a.callmon, "record", "-o", good, "--", fib])
    if r.returncode != 0:
        common.fail("record: " + r.stderr)
    rec = os.path.join(w, "hostile")
    shutil.copytree(good, rec)
    os.chmod(rec, 0o755)

    huge_elf = os.path.join(w, "huge-fib")
    craft_huge_elf(fib, huge_elf)
    marker = os.path.join(w, "marker")
    script = os.path.join(w, "evil.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\ntouch %s\n" % marker)
    os.chmod(script, 0o755)

    meta = [n for n in os.listdir(rec) if n.endswith(".meta")][0]
    path = os.path.join(rec, meta)
    with open(path) as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        if line.startswith("exe "):
            line = "exe " + script
        elif line.startswith("module ") and line.endswith(" " + fib):
            line = line[: -len(fib)] + huge_elf
        out.append(line)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    # Another recording with a second process whose meta file is HUGE bytes (a valid
    # start, then a sparse hole).
    rec_meta = os.path.join(w, "hostile-meta")
    shutil.copytree(good, rec_meta)
    big_meta = os.path.join(rec_meta, "999999.0.meta")
    with open(big_meta, "w") as f:
        f.write("callmon-process 1\nkey 999999.0\npid 999999\nexe %s\n" % script)
        f.truncate(HUGE)
    before = snapshot(rec), snapshot(rec_meta)

    elsewhere = os.path.join(w, "out")
    os.mkdir(elsewhere)
    commands = [["report"], ["replay"], ["info"], ["graph"], ["dump"],
                ["html", "-o", os.path.join(elsewhere, "r.html")],
                ["export", "--format=chrome", "-o", os.path.join(elsewhere, "r.json")]]
    too_large_said = True
    for d, cmds in ((rec, commands), (rec_meta, [["report"], ["info"]])):
        for cmd in cmds:
            try:
                r = common.run([a.callmon] + cmd + ["-d", d], timeout=60)
            except Exception as e:  # subprocess.TimeoutExpired
                failures.append("%s did not finish in 60 s (%s)" % (cmd[0], type(e).__name__))
                continue
            print("%s %s: status %d: %s" % (cmd[0], os.path.basename(d), r.returncode,
                                            r.stderr.strip()[:300]))
            if d == rec and r.returncode != 0:
                failures.append("%s failed on the recording naming a huge module" % cmd[0])
            if d == rec_meta and (r.returncode <= 0 or "too large" not in r.stderr):
                too_large_said = False
    rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print("largest RSS of a reader: %d MiB" % (rss_kib >> 10))
    if rss_kib > (1 << 20):
        failures.append("a reader used %d MiB" % (rss_kib >> 10))
    if not too_large_said:
        failures.append("a reader did not refuse the 4 GiB meta file as too large")
    if (snapshot(rec), snapshot(rec_meta)) != before:
        failures.append("a reader changed the recording's directory")
    if os.path.exists(marker):
        failures.append("a reader ran the program the recording names")
    if failures:
        common.fail("; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
