#!/usr/bin/env python3
"""libcallmon.so is loaded into every recorded program: the libraries it needs are loaded
with it, and their start-up shows in the program (libstdc++'s emergency exception pool is a
72 KiB malloc before main, which a program with its own malloc counted as its own call; it
crept in once through one runtime file built with -fexceptions). Its DT_NEEDED entries must
stay libc, libm, libgcc_s and the loader's.

  runtime_needed_audit.py build/lib/libcallmon.so --readelf readelf
Exit status: 0 passed, 1 failed."""
import argparse
import re
import subprocess
import sys

ALLOWED = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("library")
    ap.add_argument("--readelf", default="readelf")
    a = ap.parse_args()
    out = subprocess.run([a.readelf, "-d", a.library], capture_output=True, text=True,
                         check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))
    extra = sorted(needed - ALLOWED)
    if not needed or extra:
        print(f"FAIL: {a.library} needs {sorted(needed)}; not allowed: {extra}")
        return 1
    print(f"ok: {sorted(needed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
