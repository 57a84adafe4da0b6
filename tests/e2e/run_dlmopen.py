#!/usr/bin/env python3
"""Instrumented libraries dlmopen'ed into a new link namespace (tests/programs/dlmopen_main.c
loading a plugin with LM_ID_NEWLM): recorded like the same library loaded with plain dlopen,
where that is safe, and said where it is not (docs/record.md, "dlmopen").

- dlopen_plugin.c (libcmplugin.so): in every mode, the calls of plugin_entry and
  plugin_helper under dlmopen are exactly those under dlopen (and twice those when the
  program loads, closes and loads it again: a second namespace at the same place; the same
  when it goes into a namespace made before, for libm; twice those when it is called again
  after the program closed and opened libm, a pass that looks at every module anew: `churn`);
  `callmon record` warns of nothing and `callmon info` lists no problem.
- dlmopen_plugin_jmp.c (libcmplugin_jmp.so, it longjmps out of its helper) and
  dlmopen_plugin_throw.cpp (libcmplugin_throw.so, a C++ throw out of its helper): recorded
  the same in the modes whose exit is not a hijacked return (-finstrument-functions, XRay);
  in the others (-pg, -pg -mfentry, nop sleds: not recorded, said by record's closing
  warning and info's problems; --patch: not patched, info's entry-patching line says why).
- dlmopen_plugin_ctor.c (libcmplugin_ctor.so): its constructor's calls (ctor_helper), made
  inside the dlmopen, are not recorded in any mode, and `info` says so of it and of the
  module it loads (a `dlmopen-recorded` line each); under dlopen they are in the modes whose
  probes bind to the runtime at load (-finstrument-functions, -pg, -pg -mfentry) and not in
  the patched ones. What it does after its load is recorded as dlopen'ed: the module it
  loads itself with its namespace's dlopen (libcmplugin_inner.so, dlmopen_plugin_inner.c:
  inner_entry, inner_helper) and its library call getpid() into its namespace's libc (none
  with --no-libcall; the same dlmopen'ed RTLD_LAZY). On c8ad89b inner_*, getpid and the info line were missing.
In each case the program's output and status are those of its plain run.

  run_dlmopen.py --callmon build/bin/callmon --cc gcc --cxx g++ --mode MODE --work DIR
Exit status: 0 passed, 1 failed, 77 skipped (no dlmopen in this libc).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, MODE_FLAGS, report_problems)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "tests", "programs")
WANT_STATUS = 3
PLUGIN_FUNCS = ("plugin_entry", "plugin_helper")
# The modes whose exit hijacks the return address: refused for a module that longjmps.
HIJACKING = {"pg", "fentry", "patchable", "patch"}
SENTENCE = "1 module loaded with dlmopen into another namespace is not recorded: "


class Case:
    """One program run: its plain result and its recording, counted."""

    def __init__(self, a, exe, args, name, record_args=()):
        self.args = args
        self.name = name
        self.plain = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60,
                                    cwd=a.work)
        self.data = os.path.join(a.work, name + ".data")
        cmd = [a.callmon, "record", *run_fixture.MODE_RECORD_ARGS.get(a.mode, []),
               *record_args, "-o",
               self.data, "--", exe, *args]
        self.rec = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=a.work)
        rep = subprocess.run([a.callmon, "report", "--format=json", "-d", self.data],
                             capture_output=True, text=True, timeout=120, cwd=a.work)
        self.counts = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]} \
            if rep.returncode == 0 else None
        info = subprocess.run([a.callmon, "info", "--format=json", "-d", self.data],
                              capture_output=True, text=True, timeout=120, cwd=a.work)
        self.info = json.loads(info.stdout) if info.returncode == 0 else None
        self.info_text = subprocess.run([a.callmon, "info", "-d", self.data],
                                        capture_output=True, text=True, timeout=120,
                                        cwd=a.work).stdout

    def plugin_counts(self, funcs=PLUGIN_FUNCS):
        return {f: (self.counts or {}).get(f) for f in funcs}

    def recorded_modules(self):
        """The basenames of info's dlmopen_recorded paths, sorted."""
        return sorted(os.path.basename(m) for p in (self.info or {}).get("processes", [])
                      for m in p.get("dlmopen_recorded", []))

    def check_run(self, problems):
        """Output and status as without callmon; recorded and readable."""
        if (self.rec.returncode, self.rec.stdout) != (self.plain.returncode, self.plain.stdout):
            problems.append(f"{self.name}: under callmon status {self.rec.returncode}, output "
                            f"{self.rec.stdout!r}; plainly {self.plain.returncode}, "
                            f"{self.plain.stdout!r} (stderr {self.rec.stderr[-500:]!r})")
        if self.counts is None or self.info is None:
            problems.append(f"{self.name}: report or info failed")

    def check_clean(self, problems):
        """No warning about dlmopen, no problem in info."""
        if "dlmopen" in self.rec.stderr:
            problems.append(f"{self.name}: record warns {self.rec.stderr[-500:]!r}")
        if self.info is not None:
            if self.info.get("problems"):
                problems.append(f"{self.name}: info problems {self.info['problems']!r}")
            listed = [m for p in self.info.get("processes", []) for m in p.get("dlmopen_modules", [])]
            if listed:
                problems.append(f"{self.name}: info dlmopen_modules {listed!r}")


def check_unsafe(a, plain, other, path, problems):
    """A plugin that longjmps or throws out of its helper, dlopen'ed (`plain`, or None) and
    dlmopen'ed (`other`): the dlopen'ed counts where no return is hijacked; elsewhere not recorded and said
    (record's warning and info's problems, or --patch's refusal line)."""
    want = {"plugin_entry": 1, "plugin_helper": 4}
    other.check_run(problems)
    if plain:
        plain.check_run(problems)
        plain.check_clean(problems)
        if plain.plugin_counts() != want:
            problems.append(f"{plain.name}: plugin counts {plain.plugin_counts()}, expected {want}")
    if a.mode not in HIJACKING:
        other.check_clean(problems)
        if other.plugin_counts() != want:
            problems.append(f"{other.name}: plugin counts {other.plugin_counts()}, expected "
                            f"{want} (dlopen's)")
        return
    if other.plugin_counts() != {"plugin_entry": None, "plugin_helper": None}:
        problems.append(f"{other.name}: plugin counts {other.plugin_counts()}, expected none")
    if a.mode == "patch":
        why = (f"entry patching (--patch) of {path}: 0 functions patched, 0 refused; loaded "
               "with dlmopen into another namespace and imports ")
        if why not in other.info_text:
            problems.append(f"{other.name}: info does not say {why!r}: {other.info_text[-800:]!r}")
        return
    sentence = SENTENCE + path
    if sentence not in other.rec.stderr:
        problems.append(f"{other.name}: record's stderr does not say {sentence!r}: "
                        f"{other.rec.stderr[-800:]!r}")
    if other.info is not None:
        if sentence not in other.info.get("problems", []):
            problems.append(f"{other.name}: info problems {other.info.get('problems')!r}")
        listed = [m for p in other.info.get("processes", []) for m in p.get("dlmopen_modules", [])]
        if listed != [path]:
            problems.append(f"{other.name}: info dlmopen_modules {listed!r}")
    if sentence not in other.info_text:
        problems.append(f"{other.name}: info's text does not say it: {other.info_text[-800:]!r}")


# The modes whose probes bind to the runtime when a module is loaded in the base namespace
# (its constructors' calls recorded under dlopen); the others are patched after the load.
BOUND_AT_LOAD = {"cyg", "pg", "fentry"}
CTOR_FUNCS = ("plugin_ctor", "ctor_helper")
AFTER_FUNCS = ("plugin_entry", "plugin_helper", "inner_entry", "inner_helper", "getpid")


def check_ctor_plugin(a, exe, problems):
    """libcmplugin_ctor.so dlopen'ed, and dlmopen'ed (RTLD_NOW, with --no-libcall, RTLD_LAZY):
    what its constructor did is recorded only where said; what it does after its load as
    dlopen'ed."""
    lib = "libcmplugin_ctor.so"
    plain = Case(a, exe, ["dlopen", lib], "ctor-dlopen")
    other = Case(a, exe, ["dlmopen", lib], "ctor-dlmopen")
    nolib = Case(a, exe, ["dlmopen", lib], "ctor-dlmopen-nolibcall", ["--no-libcall"])
    lazy = Case(a, exe, ["lazy", lib], "ctor-dlmopen-lazy")  # RTLD_LAZY: words bound late
    for c in (plain, other, nolib, lazy):
        c.check_run(problems)
        c.check_clean(problems)
    # After the load: the plugin's own calls, those of the module it loads with its
    # namespace's dlopen, and its library call, as under dlopen.
    want = {"plugin_entry": 1, "plugin_helper": 4, "inner_entry": 1, "inner_helper": 4,
            "getpid": 1}
    if plain.plugin_counts(AFTER_FUNCS) != want:
        problems.append(f"ctor-dlopen: counts {plain.plugin_counts(AFTER_FUNCS)}, expected {want}")
    for c in (other, lazy):
        if c.plugin_counts(AFTER_FUNCS) != want:
            problems.append(f"{c.name}: counts {c.plugin_counts(AFTER_FUNCS)}, expected "
                            f"{want} (dlopen's)")
    want_nolib = dict(want, getpid=None)
    if nolib.plugin_counts(AFTER_FUNCS) != want_nolib:
        problems.append(f"ctor-dlmopen-nolibcall: counts {nolib.plugin_counts(AFTER_FUNCS)}, "
                        f"expected {want_nolib}")
    # The constructor: under dlopen recorded where the probes bind at load; under dlmopen
    # in no mode, and said.
    bound = {"plugin_ctor": 1, "ctor_helper": 3} if a.mode in BOUND_AT_LOAD else \
        {"plugin_ctor": None, "ctor_helper": None}
    if plain.plugin_counts(CTOR_FUNCS) != bound:
        problems.append(f"ctor-dlopen: constructor counts {plain.plugin_counts(CTOR_FUNCS)}, "
                        f"expected {bound}")
    modules = ["libcmplugin_ctor.so", "libcmplugin_inner.so"]
    for c in (other, nolib, lazy):
        if c.plugin_counts(CTOR_FUNCS) != {"plugin_ctor": None, "ctor_helper": None}:
            problems.append(f"{c.name}: constructor counts {c.plugin_counts(CTOR_FUNCS)}, "
                            "expected none (docs/record.md, 'dlmopen')")
        if c.recorded_modules() != modules:
            problems.append(f"{c.name}: info dlmopen_recorded {c.recorded_modules()}, "
                            f"expected {modules}")
        path = os.path.realpath(os.path.join(a.work, lib))
        said = ("loaded with dlmopen into another namespace, recorded once patched after its "
                f"load (its constructors' calls are not): {path}")
        if said not in c.info_text:
            problems.append(f"{c.name}: info does not say {said!r}: {c.info_text[-800:]!r}")
    if plain.recorded_modules():
        problems.append(f"ctor-dlopen: info dlmopen_recorded {plain.recorded_modules()}")
    return [plain, other, nolib, lazy]


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "pg", "fentry", "patchable", "patch",
                                                "xray"],
                                      lambda ap: ap.add_argument("--cxx", required=True))
    flags = ["-O2", "-g", "-I", PROGRAMS, *run_fixture.MODE_FLAGS[a.mode]]
    exe = os.path.join(a.work, "dlmopen")
    for cc, src, lib in ((a.cc, "dlopen_plugin.c", "libcmplugin.so"),
                         (a.cc, "dlmopen_plugin_ctor.c", "libcmplugin_ctor.so"),
                         (a.cc, "dlmopen_plugin_inner.c", "libcmplugin_inner.so"),
                         (a.cc, "dlmopen_plugin_jmp.c", "libcmplugin_jmp.so"),
                         (a.cxx, "dlmopen_plugin_throw.cpp", "libcmplugin_throw.so")):
        subprocess.run([cc, *flags, "-fPIC", "-shared", "-o", os.path.join(a.work, lib),
                        os.path.join(PROGRAMS, src)], check=True)
    subprocess.run([a.cc, *flags, "-o", exe, os.path.join(PROGRAMS, "dlmopen_main.c"), "-ldl"],
                   check=True)
    probe = subprocess.run([exe], capture_output=True, text=True, timeout=60, cwd=a.work)
    if probe.returncode != WANT_STATUS or "result 10," not in probe.stdout:
        # dlmopen unsupported here (a libc without namespaces): nothing to check.
        print(f"skipped: the plain run gave status {probe.returncode}, output "
              f"{probe.stdout!r}, stderr {probe.stderr[-300:]!r}")
        return 77
    problems = []
    # The plugin: dlmopen'ed (once, twice) as recorded as dlopen'ed.
    base = Case(a, exe, ["dlopen"], "dlopen")
    once = Case(a, exe, ["dlmopen"], "dlmopen")
    twice = Case(a, exe, ["twice"], "twice")
    existing = Case(a, exe, ["existing"], "existing")
    # A pass after a dlclose looks at the dlmopen'ed plugin anew: it stays recorded (on
    # c8ad89b, -finstrument-functions and -pg modes: said "not recorded" by record and info).
    churn = Case(a, exe, ["churn"], "churn")
    for c in (base, once, twice, existing, churn):
        c.check_run(problems)
        c.check_clean(problems)
    want = base.plugin_counts()
    if want != {"plugin_entry": 1, "plugin_helper": 4}:
        problems.append(f"dlopen: plugin counts {want}, expected 1 and 4")
    if once.plugin_counts() != want:
        problems.append(f"dlmopen: plugin counts {once.plugin_counts()}, dlopen's {want}")
    if existing.plugin_counts() != want:
        problems.append(f"existing: plugin counts {existing.plugin_counts()}, dlopen's {want}")
    if churn.plugin_counts() != {f: 2 * n for f, n in want.items() if n is not None}:
        problems.append(f"churn: plugin counts {churn.plugin_counts()}, twice dlopen's {want}")
    if twice.plugin_counts() != {f: 2 * n for f, n in want.items() if n is not None}:
        problems.append(f"twice: plugin counts {twice.plugin_counts()}, twice dlopen's {want}")
    # The program's own functions as under dlopen (gcc -O2 leaves after_load too short for
    # --patch: absent from both).
    for c, times in ((once, 1), (twice, 2), (existing, 1), (churn, 1)):
        for fn in ("main", "load_in_namespace", "after_load"):
            b = (base.counts or {}).get(fn)
            expect = b * times if b is not None and fn == "load_in_namespace" else b
            got = (c.counts or {}).get(fn)
            if got != expect:
                problems.append(f"{c.name}: {fn} has {got} calls, expected {expect} (dlopen's {b})")
    # The plugins that longjmp or throw: recorded where no return is hijacked, said elsewhere.
    unsafe = []
    # The throwing plugin dlopen'ed too: a C program that dlopens a C++ library which throws
    # was killed by SIGSEGV under callmon in every mode (libstdc++ and libgcc_s loaded
    # RTLD_LOCAL: the runtime's _Unwind_RaiseException found no real one).
    for kind in ("jmp", "throw"):
        lib = f"libcmplugin_{kind}.so"
        plain = Case(a, exe, ["dlopen", lib], f"{kind}-dlopen")
        other = Case(a, exe, ["dlmopen", lib], f"{kind}-dlmopen")
        unsafe += [c for c in (plain, other) if c]
        check_unsafe(a, plain, other, os.path.realpath(os.path.join(a.work, lib)), problems)
    ctor = check_ctor_plugin(a, exe, problems)
    for c in (base, once, twice, existing, churn, *unsafe, *ctor):
        print(f"{c.name}: status {c.rec.returncode}, plugin {c.plugin_counts()}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
