#!/usr/bin/env python3
"""Checks `callmon export --format=perfetto` against `--format=chrome` on one golden trace.

Usage: export_perfetto_check.py CALLMON MAKE_TRACE TRACE WORK [EXPORT ARGS...]

Builds the recording of TRACE, exports it as chrome JSON and as a Perfetto protobuf trace
(with the same EXPORT ARGS, e.g. filters), decodes the protobuf with the small decoder
below (written from the field numbers of Perfetto's public protos, independently of the
C++ writer) and checks that:
  - every packet is well formed, every sequence starts with SEQ_INCREMENTAL_STATE_CLEARED,
    defines its incremental clock before using it, and only uses interned names it defined;
  - slices nest on each track (begin/end pairs match, children inside their parents);
  - the slices are chrome's complete events: same process and thread, same names, same
    begin and end (to 1 ns: chrome rounds begin and duration, perfetto begin and end),
    same exit kind and inherited flag, in the same order (both write a call as it ends);
  - the track names are chrome's process_name / thread_name.
`export --estimate` (same EXPORT ARGS) must write nothing, count exactly the calls exported
and put the size within a factor of 2 of the real one, for both formats.
With CALLMON_EXPORT_LARGE_BYTES=1 the export must print its size note on stderr first.
If `protoc` is installed, `protoc --decode_raw` must also read the file.
Exit status 0 on success, 1 with a message on a mismatch.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path


# --- protobuf wire format ------------------------------------------------------------

def read_varint(buf, pos):
    value = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(buf):
    """Yields (field number, wire type, value) of a message: an int for varints, bytes
    for length-delimited fields."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, pos = read_varint(buf, pos)
        elif wt == 2:
            n, pos = read_varint(buf, pos)
            if pos + n > len(buf):
                raise ValueError(f"field {num}: length {n} past the end")
            val = buf[pos:pos + n]
            pos += n
        elif wt == 1:
            val = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        elif wt == 5:
            val = int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        else:
            raise ValueError(f"field {num}: wire type {wt}")
        yield num, wt, val


def message(buf):
    """A message as {field: [values]}."""
    out = {}
    for num, _, val in fields(buf):
        out.setdefault(num, []).append(val)
    return out


def one(msg, num, default=None):
    vals = msg.get(num)
    return vals[-1] if vals else default


# --- Perfetto trace (field numbers from Perfetto's public protos) ---------------------

SEQ_INCREMENTAL_STATE_CLEARED = 1
BOOTTIME = 6


def decode_perfetto(data):
    """Returns (slices, track names, number of sequences): slices as dicts in the order their END events come,
    track names by (pid, tid) for threads and (pid, None) for processes."""
    seqs = {}    # seq id -> state
    tracks = {}  # uuid -> {"pid", "tid", "name"}
    slices = []
    for num, wt, pkt_bytes in fields(data):
        if num != 1 or wt != 2:
            raise ValueError(f"Trace field {num}/{wt}: only packets (1) expected")
        pkt = message(pkt_bytes)
        seq = one(pkt, 10)
        if not seq:
            raise ValueError("packet without trusted_packet_sequence_id")
        flags = one(pkt, 13, 0)
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            seqs[seq] = {"names": {}, "clock": None, "track": None, "clock_value": None,
                         "stack": [], "last": None}
        st = seqs.get(seq)
        if st is None:
            raise ValueError(f"sequence {seq}: packet before SEQ_INCREMENTAL_STATE_CLEARED")
        if 59 in pkt:  # trace_packet_defaults
            d = message(one(pkt, 59))
            st["clock"] = one(d, 58)
            ted = one(d, 11)
            if ted is not None:
                st["track"] = one(message(ted), 11)
        if 12 in pkt:  # interned_data
            for en in message(one(pkt, 12)).get(2, []):  # event_names
                e = message(en)
                iid, name = one(e, 1), one(e, 2).decode()
                if iid in st["names"] and st["names"][iid] != name:
                    raise ValueError(f"iid {iid} redefined")
                st["names"][iid] = name
        if 6 in pkt:  # clock_snapshot
            clocks = [message(c) for c in message(one(pkt, 6)).get(1, [])]
            own = [c for c in clocks if one(c, 1) == st["clock"]]
            boot = [c for c in clocks if one(c, 1) == BOOTTIME]
            if not own or not boot or not one(own[0], 3):
                raise ValueError(f"sequence {seq}: snapshot without the incremental clock")
            st["clock_value"] = one(own[0], 2, 0)
            st["boot_offset"] = one(boot[0], 2, 0) - st["clock_value"]
            continue
        if 60 in pkt:  # track_descriptor
            td = message(one(pkt, 60))
            uuid = one(td, 1)
            if 3 in td:
                p = message(one(td, 3))
                tracks[uuid] = {"pid": one(p, 1), "tid": None, "name": one(p, 6).decode()}
            if 4 in td:
                t = message(one(td, 4))
                tracks[uuid] = {"pid": one(t, 1), "tid": one(t, 2), "name": one(t, 5).decode()}
        if 11 not in pkt:
            continue
        # A track event: its time on the sequence's incremental clock.
        if 8 not in pkt:
            raise ValueError(f"sequence {seq}: track event without a timestamp")
        if st["clock_value"] is None:
            raise ValueError(f"sequence {seq}: event before the clock snapshot")
        st["clock_value"] += one(pkt, 8)
        ts = st["clock_value"] + st["boot_offset"]
        te = message(one(pkt, 11))
        typ = one(te, 9)
        track = one(te, 11, st["track"])
        notes = {}
        for a in te.get(4, []):  # debug_annotations
            am = message(a)
            key = one(am, 10).decode()
            notes[key] = one(am, 6).decode() if 6 in am else bool(one(am, 2))
        if typ == 1:
            iid = one(te, 10)
            if iid not in st["names"]:
                raise ValueError(f"sequence {seq}: name iid {iid} not interned")
            st["stack"].append({"track": track, "name": st["names"][iid], "begin": ts,
                                "inherited": notes.get("inherited", False)})
        elif typ == 2:
            if not st["stack"]:
                raise ValueError(f"sequence {seq}: SLICE_END with no open slice")
            s = st["stack"].pop()
            s["end"] = ts
            s["exit"] = notes.get("exit", "normal")
            s["continued"] = notes.get("continued", False)
            s["seq"] = seq
            s["depth"] = len(st["stack"])
            if st["stack"] and st["stack"][-1]["begin"] > s["begin"]:
                raise ValueError(f"{s['name']} begins before its parent")
            slices.append(s)
        else:
            raise ValueError(f"track event type {typ}")
    for seq, st in seqs.items():
        if st["stack"]:
            raise ValueError(f"sequence {seq}: {len(st['stack'])} slices never end")
    names = {}
    for uuid, t in tracks.items():
        names[(t["pid"], t["tid"])] = t["name"]
    for s in slices:
        t = tracks.get(s["track"])
        if t is None:
            raise ValueError(f"slice {s['name']} on undescribed track {s['track']}")
        s["pid"], s["tid"] = t["pid"], t["tid"]
    return slices, names, len(seqs)


def main():
    callmon, make_trace, trace, work = sys.argv[1:5]
    extra = sys.argv[5:]
    work = Path(work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rec = work / "rec.data"
    subprocess.run([make_trace, trace, str(rec)], check=True)
    for fmt, out in (("chrome", "out.json"), ("perfetto", "out.pftrace")):
        p = subprocess.run([callmon, "export", f"--format={fmt}", "-o", out, "-d", str(rec)] +
                           extra, cwd=work, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL: export --format={fmt} exited {p.returncode}: {p.stderr}")
            return 1
    data = (work / "out.pftrace").read_bytes()
    try:
        slices, track_names, sequences = decode_perfetto(data)
    except ValueError as e:
        print(f"FAIL: the perfetto trace does not decode: {e}")
        return 1

    chrome = json.loads((work / "out.json").read_text())["traceEvents"]
    cnames = {}
    events = []
    for ev in chrome:
        if ev["ph"] == "M":
            key = (ev["pid"], ev["tid"] if ev["name"] == "thread_name" else None)
            cnames[key] = ev["args"]["name"]
        else:
            events.append(ev)
    if cnames != track_names:
        print(f"FAIL: track names differ:\n  chrome   {cnames}\n  perfetto {track_names}")
        return 1

    def by_thread(items, key):
        out = {}
        for it in items:
            out.setdefault(key(it), []).append(it)
        return out

    c_threads = by_thread(events, lambda e: (e["pid"], e["tid"]))
    p_threads = by_thread(slices, lambda s: (s["pid"], s["tid"]))
    if sorted(c_threads) != sorted(p_threads):
        print(f"FAIL: threads differ: chrome {sorted(c_threads)}, perfetto {sorted(p_threads)}")
        return 1
    for key, cev in c_threads.items():
        pev = p_threads[key]
        if len(cev) != len(pev):
            print(f"FAIL: thread {key}: chrome {len(cev)} calls, perfetto {len(pev)} slices")
            return 1
        for i, (c, p) in enumerate(zip(cev, pev)):
            cb = round(c["ts"] * 1000)
            ce = round((c["ts"] + c["dur"]) * 1000)
            # The chrome export names an unusual exit and an inherited frame in "cat".
            cat = [w for w in c.get("cat", "").split(",") if w]
            cinh = "inherited" in cat
            ccont = "continued" in cat
            cexit = next((w for w in cat if w not in ("inherited", "continued")), "normal")
            if (c["name"] != p["name"] or abs(cb - p["begin"]) > 1 or abs(ce - p["end"]) > 1
                    or cexit != p["exit"] or cinh != p["inherited"]
                    or ccont != p["continued"]):
                print(f"FAIL: thread {key} call {i}:\n  chrome   {c}\n  perfetto {p}")
                return 1
    print(f"ok: {len(slices)} slices on {len(p_threads)} threads, {len(data)} bytes "
          f"(chrome {(work / 'out.json').stat().st_size})")

    # --estimate: nothing written, the exact call count, the size within a factor of 2.
    for fmt, out in (("chrome", "out.json"), ("perfetto", "out.pftrace")):
        quiet = work / f"estimate-{fmt}"
        quiet.mkdir()
        p = subprocess.run([callmon, "export", f"--format={fmt}", "--estimate", "-d",
                            str(rec)] + extra, cwd=quiet, capture_output=True, text=True)
        m = re.search(r"(\d+) calls?, (\d+) threads?, .*\((\d+) bytes\)", p.stdout)
        if p.returncode != 0 or not m or any(quiet.iterdir()):
            print(f"FAIL: export --format={fmt} --estimate: status {p.returncode}, "
                  f"stdout {p.stdout!r}, stderr {p.stderr!r}, files {list(quiet.iterdir())}")
            return 1
        calls, threads, size = (int(g) for g in m.groups())
        real = (work / out).stat().st_size
        # Threads: thread files, one perfetto sequence each (an exec'd process's thread
        # shares its pid and tid with the one before the exec).
        if calls != len(slices) or threads != sequences or not real / 2 <= size <= real * 2:
            print(f"FAIL: {fmt} estimate {calls} calls, {threads} threads, {size} bytes; "
                  f"exported {len(slices)} calls, {sequences} threads, {real} bytes")
            return 1

    # An export that will pass the "large" size (1 GiB; 1 byte here) says so on stderr
    # first, and writes the same file.
    env = dict(os.environ, CALLMON_EXPORT_LARGE_BYTES="1")
    p = subprocess.run([callmon, "export", "--format=perfetto", "-o", "large.pftrace", "-d",
                        str(rec)] + extra, cwd=work, capture_output=True, text=True, env=env)
    if (p.returncode != 0 or "note: writing" not in p.stderr or
            (work / "large.pftrace").read_bytes() != data):
        print(f"FAIL: large export: status {p.returncode}, stderr {p.stderr!r}")
        return 1

    protoc = shutil.which("protoc")
    if protoc is None:
        print("skipped the protoc --decode_raw check: protoc is not installed "
              "(Debian package protobuf-compiler)")
    else:
        with open(work / "out.pftrace", "rb") as f:
            p = subprocess.run([protoc, "--decode_raw"], stdin=f, capture_output=True)
        if p.returncode != 0:
            print(f"FAIL: protoc --decode_raw: {p.stderr.decode()}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
