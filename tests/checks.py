"""The named checks of the scripted tests (tests/*/*.py): each prints `ok` or `FAIL` with its
name (and, on failure, what was seen), the failures are kept, and summary() prints the count
and returns the script's exit status. A script imports it with its own directory's parent
on sys.path:

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from checks import check, summary
"""

FAILURES = []


def check(name, ok, detail=""):
    """Records one check; `detail` (anything printable) is shown when it failed."""
    print(("ok  " if ok else "FAIL") + " " + name, flush=True)
    if not ok:
        FAILURES.append(name)
        if detail:
            print("     " + str(detail).replace("\n", "\n     "), flush=True)
    return ok


def summary():
    """Prints how many checks failed; returns 1 if any did, else 0."""
    print(f"{len(FAILURES)} failed" if FAILURES else "all passed", flush=True)
    return 1 if FAILURES else 0
