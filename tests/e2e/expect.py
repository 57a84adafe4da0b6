"""Builds the expected, normalised `callmon replay` text of a fixture (see run_fixture.py).

The replay contract: per process `# process KEY pid PID ppid PPID exe PATH`, per thread
`# thread TID "NAME"`, then one line per call event: a 12-character duration field, ` | `,
two spaces per depth and `NAME;` (a call without callees), `NAME {` (opening) or
`} /* NAME */` (closing), optionally followed by a mark such as ` [exception]`. Normalised,
the duration field goes, pids become P1, P2... in pid order, the first thread of a process
is `# thread MAIN` (tid == pid) and the others `# thread T`, and executables are shown by
their base name.

MODE, OPT and COMPILER are set by run_fixture.py before it loads a fixture: the hook mode
(cyg, pg, fentry), the optimisation level (O0, O2) and the compiler (gcc, clang), for the
fixtures whose expected tree legitimately differs between them.
"""

MODE = "cyg"
OPT = "O2"
COMPILER = "gcc"


def display_name(name):
    """The replay's spelling of a function: the demangled name, `()` added if it has no `(`."""
    return name if "(" in name else name + "()"


class Replay:
    """Appends normalised replay lines; `lines` is the result."""

    def __init__(self, program):
        self.program = program
        self.lines = []
        self.depth = 0

    def _mark(self, mark):
        return f" [{mark}]" if mark else ""

    def process(self, key, ppid="EXT", exe=None):
        pid = key.split(".")[0]
        self.lines.append(f"# process {key} pid {pid} ppid {ppid} exe {exe or self.program}")
        self.depth = 0
        return self

    def thread(self, main=True):
        self.lines.append("# thread MAIN" if main else "# thread T")
        self.depth = 0
        return self

    def special(self, text):
        """A `# ...` line inside a thread (fork, exec). Compared without indentation: its
        place among the call lines already says where it happened."""
        self.lines.append("# " + text)
        return self

    def leaf(self, name, mark=None):
        self.lines.append("  " * self.depth + display_name(name) + ";" + self._mark(mark))
        return self

    def open(self, name, mark=None):
        self.lines.append("  " * self.depth + display_name(name) + " {" + self._mark(mark))
        self.depth += 1
        return self

    def close(self, name, mark=None):
        self.depth -= 1
        self.lines.append("  " * self.depth + "} /* " + display_name(name) + " */" +
                          self._mark(mark))
        return self

    def call(self, name, body=None, mark=None):
        """A whole call: a leaf when body is None, else open, body(self), close."""
        if body is None:
            return self.leaf(name, mark)
        self.open(name)
        body(self)
        return self.close(name, mark)

    def repeat(self, n, name, body=None, mark=None):
        for _ in range(n):
            self.call(name, body, mark)
        return self


def cut(lines, max_depth):
    """The normalised tree `lines` as a recording with `callmon record --max-depth` shows it:
    calls deeper than max_depth (main is depth 1) left out; a call whose callees all went
    becomes a leaf carrying its closing line's mark."""
    out = []
    for line in lines:
        if line.startswith("#"):
            out.append(line)
            continue
        body = line.lstrip(" ")
        depth = (len(line) - len(body)) // 2 + 1
        if depth > max_depth:
            continue
        if body.startswith("} /* ") and out and out[-1].endswith(" {"):
            opened = out.pop()
            mark = body.split(" */", 1)[1]
            out.append(opened[:-2] + ";" + mark)
            continue
        out.append(line)
    return out


def deep_recursion_prefix(r, nlines):
    """The first `nlines` replay lines of deep.c: main() on the main thread, then
    deep_thread() opening recurse() inside recurse() (deep.py, stress_deep.py)."""
    r.process("P1.0").thread()
    r.leaf("main")
    r.thread(main=False)
    r.open("deep_thread")
    while len(r.lines) < nlines:
        r.open("recurse")
    return r.lines


def drop(lines, keeps):
    """The normalised tree `lines` as a name filter shows it (callmon record --include/
    --exclude, or the same options of report/replay): calls whose display name `keeps`
    rejects are left out, their callees move up under the nearest kept caller, and a kept
    call whose callees all went becomes a leaf carrying its closing line's mark."""
    out = []
    stack = []  # per open call of the input: whether it is kept
    for line in lines:
        if line.startswith("#"):
            out.append(line)
            continue
        body = line.lstrip(" ")
        depth = sum(stack)
        if body.startswith("} /* "):
            if not stack.pop():
                continue
            depth -= 1
            name = body[5:].split(" */", 1)[0]
            mark = body.split(" */", 1)[1]
            if out and out[-1] == "  " * depth + name + " {":
                out[-1] = "  " * depth + name + ";" + mark
            else:
                out.append("  " * depth + body)
            continue
        if body.endswith(" {") or " { [" in body:
            name = body.split(" {", 1)[0]
            stack.append(bool(keeps(name)))
            if stack[-1]:
                out.append("  " * depth + body)
            continue
        name = body.split(";", 1)[0]
        if keeps(name):
            out.append("  " * depth + body)
    return out


def name_filter(include=(), exclude=()):
    """keeps(name) for repeated --include/--exclude patterns (a name is kept when any include
    matches, if there is one, and no exclude does). Python's re stands in for ECMAScript: the
    same meaning for the patterns the fixtures use."""
    import re

    def keeps(name):
        if include and not any(re.search(p, name) for p in include):
            return False
        return not any(re.search(p, name) for p in exclude)
    return keeps


def filtered_fixture(ns, base, include=(), exclude=()):
    """Fills the module namespace `ns` of a record-time name-filter fixture from the
    unfiltered fixture `base`: the same program, RECORD_ARGS with the patterns, the counts,
    info and tree with the calls the filter leaves out taken away, and ANALYSIS_FILTER, the
    same filter for report/replay on an unfiltered recording (run_fixture.py checks that
    both give the same tree and counts)."""
    keeps = name_filter(include, exclude)
    for key in ("SOURCES", "PROGRAM", "STDOUT", "STATUS", "PLUGINS", "SHARED_LIBS"):
        if hasattr(base, key):
            ns[key] = getattr(base, key)
    ns["RECORD_ARGS"] = ([f"--include={p}" for p in include] +
                         [f"--exclude={p}" for p in exclude])
    analysis = []
    if include:
        analysis.append("--include=" + "|".join(f"(?:{p})" for p in include))
    if exclude:
        analysis.append("--exclude=" + "|".join(f"(?:{p})" for p in exclude))
    ns["ANALYSIS_FILTER"] = analysis
    ns["COUNTS"] = {k: v for k, v in base.COUNTS.items() if keeps(k)}
    calls = sum(ns["COUNTS"].values())
    ns["INFO"] = {"exit_status": base.INFO["exit_status"], "exit_signal": None, "calls": calls,
                  "problems": [], "processes": [{"key": "P1.0", "threads": [("finished", calls)]}]}
    ns["tree"] = lambda r: drop(base.tree(r), keeps)


def cpu_flag_missing(flag, why):
    """A fixture's skip reason when the processor lacks FLAG as the kernel reports it in
    /proc/cpuinfo (the kernel clears a flag whose state it does not enable), else None."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
    except OSError:
        return "cannot read /proc/cpuinfo"
    return None if flag in flags else why
