#!/usr/bin/env python3
"""A make_trace text recording for the HTML report's time-order bound (docs/html.md,
Benchmark): one thread, TOPS outermost calls of 40 us each, each the top of a chain of
DEPTH nested calls, every level 100 ns shorter at both ends. With the defaults about
100 000 of the calls are wider than the page's merge width (the span over 2 000), so the
time order keeps that many boxes: the page near its bound.

  html_deep_trace.py OUT.txt [TOPS] [DEPTH]
"""
import sys


def main():
    out = sys.argv[1]
    tops = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 120
    width, step, gap = 40000, 100, 1000
    lines = ["process 700.0 pid 700 ppid 1 exe /bin/deep"]
    lines += [f"symbol {0x1000 + 0x10 * d:x} level_{d}" for d in range(depth)]
    lines.append("thread 700 name deep")
    t = 0
    for _ in range(tops):
        for d in range(depth):
            lines.append(f"enter {t + d * step} level_{d}")
        for d in reversed(range(depth)):
            lines.append(f"exit {t + width - d * step}")
        t += width + gap
    lines.append(f"end {t}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
