#!/usr/bin/env python3
"""Golden test of `callmon html`: builds the recording of TRACE with make_trace, writes the
page with the given callmon html ARGS, checks that it is self-contained (no URL the browser
would fetch, one data blob, no '<' inside it, gzip+base64 with --compress=always, plain JSON
otherwise) and compares its data blob, printed one row a line, with EXPECTED. UPDATE=1 in the environment writes EXPECTED instead (check it by hand).

  html_data.py CALLMON MAKE_TRACE TRACE EXPECTED WORK [ARGS...]
"""
import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

OPEN = re.compile(r'<script type="application/json" id="callmon-data" '
                  r'data-encoding="(json|gzip\+base64)">')


def readable(data):
    """The blob with one function, arc or tree node a line."""
    out = []
    for key, value in data.items():
        if key == "tree":
            rest = {k: v for k, v in value.items() if k != "nodes"}
            out.append(f"tree: {json.dumps(rest)}")
            out += [f"  node {i}: {json.dumps(n)}" for i, n in enumerate(value["nodes"])]
        elif key == "threads":
            # Each thread's own tree, then its time-ordered boxes, six numbers each, then
            # the marks of boxes holding pieces of calls (box, marks, pieces), if any.
            out.append("threads:")
            for t in value:
                head = {k: v for k, v in t.items() if k not in ("tree", "timeline", "marks")}
                out.append(f"  thread: {json.dumps(head, ensure_ascii=False)}")
                rest = {k: v for k, v in t["tree"].items() if k != "nodes"}
                out.append(f"    tree: {json.dumps(rest)}")
                out += [f"    node {i}: {json.dumps(n)}" for i, n in enumerate(t["tree"]["nodes"])]
                boxes = t["timeline"]
                out += [f"    box {i // 6}: {json.dumps(boxes[i:i + 6])}"
                        for i in range(0, len(boxes), 6)]
                marks = t.get("marks", [])
                out += [f"    marks of box {marks[i]}: {json.dumps(marks[i + 1:i + 3])}"
                        for i in range(0, len(marks), 3)]
        elif isinstance(value, list):
            out.append(f"{key}:")
            out += [f"  {i}: {json.dumps(row, ensure_ascii=False)}" for i, row in enumerate(value)]
        else:
            out.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(out) + "\n"


def main():
    callmon, make_trace, trace, expected, work = map(os.path.abspath, sys.argv[1:6])
    args = sys.argv[6:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    name = os.path.splitext(os.path.basename(trace))[0]
    subprocess.run([make_trace, trace, os.path.join(work, name + ".data")], check=True)
    p = subprocess.run([callmon, "html", "-d", name + ".data", "-o", "page.html"] + args,
                       cwd=work, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"callmon html exited with {p.returncode}: {p.stderr}")
    page = open(os.path.join(work, "page.html"), encoding="utf-8").read()
    problems = []
    opens = list(OPEN.finditer(page))
    if len(opens) != 1:
        sys.exit("not exactly one data blob in the page")
    start = opens[0].end()
    end = page.find("</script>", start)
    blob = page[start:end]
    if opens[0].group(1) == "gzip+base64":
        blob = gzip.decompress(base64.b64decode(blob)).decode("utf-8")
    if "<" in blob:
        problems.append("a raw '<' inside the data blob")
    want_encoding = "gzip+base64" if "--compress=always" in args else "json"
    if opens[0].group(1) != want_encoding:
        problems.append(f"data encoded as {opens[0].group(1)}, expected {want_encoding}")
    for pattern in (r"https?://", r"<link\b", r"\bsrc\s*=", r"@import", r"url\("):
        if re.search(pattern, page, re.I):
            problems.append(f"the page refers to something outside it: /{pattern}/")
    if "@CALLMON_" in page:
        problems.append("a template marker was left in the page")
    if problems:
        sys.exit("page problems: " + "; ".join(problems))
    actual = readable(json.loads(blob))
    if os.environ.get("UPDATE") == "1":
        open(expected, "w", encoding="utf-8").write(actual)
        return 0
    want = open(expected, encoding="utf-8").read()
    if actual != want:
        open(os.path.join(work, "actual.txt"), "w", encoding="utf-8").write(actual)
        d = subprocess.run(["diff", "-u", expected, os.path.join(work, "actual.txt")],
                           capture_output=True, text=True).stdout
        sys.exit(f"the data blob differs from {expected}:\n{d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
