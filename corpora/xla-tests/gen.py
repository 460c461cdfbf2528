#!/usr/bin/env python3
"""Builds corpora/xla-tests/xla-tests.jsonl: every HLO text in openxla/xla's test files, with
the verdict of XLA's own parser (jaxlib 0.10.2's `hlo_module_from_text`) on each.

Usage (from the repository root, with the project venv):

    .venv/bin/python corpora/xla-tests/gen.py --git-dir PATH/TO/xla/.git [--jobs N]

PATH/TO/xla is any clone of openxla/xla (or of a fork that follows it; a bare clone will do)
holding COMMIT below, the XLA commit jax-v0.10.2 pins in third_party/xla/revision.bzl, so the
tests and the parser that judges them are the same XLA. Files are read with `git ls-tree` and
`git cat-file` at COMMIT; no work tree is needed.

What is collected (paths sorted; see README.md):
  * `xla/**/*_test.cc`: every C++ raw string literal (R"(...)", R"hlo(...)hlo", ...) with a line
    that starts (after blanks) with `HloModule` or `ENTRY`. Comments, ordinary string and
    character literals are skipped by a small C++ lexer, so a raw string inside them is not
    taken. The text is the literal's content, byte for byte.
  * `xla/**/*.hlo` but the benchmark inputs under SKIP_DIR: each segment between `// -----`
    lines (one segment when there is none), with the lit lines left out: comment lines
    `// P:` or `// P-SUFFIX...:` with P one of RUN, REQUIRES, UNSUPPORTED, XFAIL, CHECK and the
    FileCheck prefixes the file's RUN lines name (`// CHECK-NEXT:`, `// CHECK-DAG-SAME:`,
    `// RUN-NOT:`, `// CHECK-gfx1250:`, `// CHECK-SAME{LITERAL}:`). Every other line is kept
    as the file has it. Segments with nothing but blanks and comments left are skipped.
  Texts over MAX_TEXT bytes and files the clone lacks are left out (listed on stderr).

`index` is the text's position in its file: the ordinal of the raw string among the file's
HLO raw strings (.cc), or of the segment among all `// -----` segments (.hlo), from 0. `line`
is the 1-based line of the file where the text starts.

Each text goes to XLA's parser in a worker process (`--worker`, many texts per process, one
at a time, a timeout each). XLA may abort the process (a CHECK failure): that text's verdict
is "crash" with the log line XLA wrote, and a fresh worker takes the rest. Verdicts:
"accept", "reject" (the parser returned an error), "crash"; "timeout" is recorded if a
text takes longer than --timeout seconds. `xla_error` is the error's first line, followed by
its first `was parsing L:C: error: ...` line when the first line only announces a syntax error
(empty on accept).

The output is deterministic: sorted by (origin, index), one compact JSON object a line,
keys in a fixed order.
"""
import argparse
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

COMMIT = "5a9e73cbd92530cac2ac36f4736a774b2412afe2"
MAX_TEXT = 256 * 1024
# Benchmark inputs (whole models), not tests.
SKIP_DIR = "xla/tools/benchmarks/"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "xla-tests.jsonl")


# ---------------------------------------------------------------- reading the sources


def git(git_dir, *args, text=True):
    out = subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True
    ).stdout
    return out.decode("utf-8", "replace") if text else out


def list_sources(git_dir):
    names = git(git_dir, "ls-tree", "-r", "--name-only", "-z", COMMIT).split("\0")
    cc = [n for n in names if n.startswith("xla/") and n.endswith("_test.cc")]
    hlo = [
        n
        for n in names
        if n.startswith("xla/") and n.endswith(".hlo") and not n.startswith(SKIP_DIR)
    ]
    return sorted(cc + hlo)


def read_blobs(git_dir, paths):
    """path -> text for every path whose blob the clone has (a partial clone may lack some)."""
    proc = subprocess.Popen(
        ["git", "--git-dir", git_dir, "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    out = {}
    missing = []
    for p in paths:
        proc.stdin.write(f"{COMMIT}:{p}\n".encode())
        proc.stdin.flush()
        header = proc.stdout.readline().decode().split()
        if len(header) < 3 or header[1] != "blob":
            missing.append(p)
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # the newline after the object
        out[p] = data.decode("utf-8", "replace")
    proc.stdin.close()
    proc.wait()
    return out, missing


# ---------------------------------------------------------------- C++ raw strings

IDENT = re.compile(r"[A-Za-z0-9_]")
RAW_OPEN = re.compile(r'R"([^()\\\s]{0,16})\(')
HLO_LINE = re.compile(r"^[ \t]*(HloModule|ENTRY)\b", re.M)


def ident_before(src, i):
    j = i
    while j > 0 and IDENT.match(src[j - 1]):
        j -= 1
    return src[j:i]


def raw_strings(src):
    """(start offset, content) of every raw string literal outside comments and other literals."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "R" and src.startswith('R"', i) and ident_before(src, i) in ("", "u8", "u", "U", "L"):
            m = RAW_OPEN.match(src, i)
            if not m:
                i += 2
                continue
            close = ")" + m.group(1) + '"'
            end = src.find(close, m.end())
            if end < 0:
                break
            out.append((m.end(), src[m.end():end]))
            i = end + len(close)
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"' and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            i = j + 1
        elif c == "'":
            before = ident_before(src, i)
            if before and before not in ("u8", "u", "U", "L"):
                i += 1  # a digit separator (1'000)
                continue
            j = i + 1
            while j < n and src[j] != "'" and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def line_of(src, offset):
    return src.count("\n", 0, offset) + 1


def texts_from_cc(path, src):
    out = []
    for start, body in raw_strings(src):
        if HLO_LINE.search(body):
            out.append({"origin": path, "index": len(out), "line": line_of(src, start), "text": body})
    return out


# ---------------------------------------------------------------- lit .hlo files

SEPARATOR = re.compile(r"^[ \t]*//[ \t]*-----[ \t]*$")
PREFIX_ARG = re.compile(r"-?-check-prefix(?:es)?[= ]([A-Za-z0-9_,-]+)")
LIT_SUFFIX = r"(?:-[A-Za-z0-9_]+)*"  # -NEXT, -DAG-SAME, -COUNT-2, -PTX-NOT, -gfx1250, ...
COMMENT_ONLY = re.compile(r"^\s*(//.*)?$")


def lit_line_pattern(src):
    prefixes = {"CHECK"}
    for line in src.splitlines():
        s = line.strip()
        if re.match(r"//\s*RUN:", s):
            for m in PREFIX_ARG.finditer(s):
                prefixes.update(p for p in m.group(1).split(",") if p)
    alts = "|".join(sorted((re.escape(p) for p in prefixes), key=lambda p: (-len(p), p)))
    return re.compile(
        rf"^[ \t]*//[ \t]*(?:RUN|REQUIRES|UNSUPPORTED|XFAIL|{alts}){LIT_SUFFIX}(?:\{{LITERAL\}})?:"
    )


def texts_from_hlo(path, src):
    lit = lit_line_pattern(src)
    lines = src.splitlines(keepends=True)
    segments = [[1, []]]  # [first line number, kept lines]
    for no, line in enumerate(lines, 1):
        if SEPARATOR.match(line):
            segments.append([no + 1, []])
        elif not lit.match(line):
            segments[-1][1].append(line)
    out = []
    for index, (first, kept) in enumerate(segments):
        text = "".join(kept)
        if all(COMMENT_ONLY.match(l) for l in text.splitlines()):
            continue
        out.append({"origin": path, "index": index, "line": first, "text": text})
    return out


def collect(git_dir):
    paths = list_sources(git_dir)
    blobs, missing = read_blobs(git_dir, paths)
    for p in missing:
        print(f"absent from the clone, left out: {p}", file=sys.stderr)
    entries, too_big = [], []
    for p in paths:
        if p not in blobs:
            continue
        found = texts_from_cc(p, blobs[p]) if p.endswith(".cc") else texts_from_hlo(p, blobs[p])
        for e in found:
            size = len(e["text"].encode())
            if size > MAX_TEXT:
                too_big.append((e["origin"], e["index"], size))
            else:
                entries.append(e)
    for origin, index, size in too_big:
        print(f"over {MAX_TEXT} bytes, left out: {origin} #{index} ({size} bytes)", file=sys.stderr)
    entries.sort(key=lambda e: (e["origin"], e["index"]))
    return entries, missing, too_big


# ---------------------------------------------------------------- XLA's verdicts


def first_error_line(msg):
    lines = [l for l in msg.splitlines() if l.strip()]
    if not lines:
        return ""
    first = lines[0].strip()
    if first.endswith(":"):
        for l in lines[1:]:
            if "error:" in l:
                return f"{first} {l.strip()}"
    return first


def worker():
    """Reads one JSON text per line on stdin; writes one JSON verdict per line on stdout."""
    from jaxlib import _hlo

    out = sys.stdout
    for line in sys.stdin:
        text = json.loads(line)
        try:
            _hlo.hlo_module_from_text(text)
            v = {"xla": "accept", "xla_error": ""}
        except Exception as e:  # the parser's error status, raised as a Python exception
            v = {"xla": "reject", "xla_error": first_error_line(str(e))}
        out.write(json.dumps(v) + "\n")
        out.flush()


LOG_PREFIX = re.compile(r"^[FEWI]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+")


def crash_line(stderr_text, rc):
    lines = stderr_text.splitlines()
    for l in lines:  # XLA's fatal log line: F0615 12:00:00.000000  1234 file.cc:12] Check failed: ...
        if re.match(r"^F\d{4} ", l):
            return LOG_PREFIX.sub("", l).strip()
    for l in lines:
        if "Check failed" in l or "terminate called" in l:
            return l.strip()
    sig = -rc if rc is not None and rc < 0 else None
    name = signal.Signals(sig).name if sig else f"exit status {rc}"
    return f"process died ({name})"


class Worker:
    def __init__(self, python, timeout):
        self.python, self.timeout = python, timeout
        self.start()

    def start(self):
        fd, self.errpath = tempfile.mkstemp(prefix="xla-tests-worker-", suffix=".err")
        os.close(fd)
        self.err = open(self.errpath, "w+")
        self.proc = subprocess.Popen(
            [self.python, os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            text=True,
            bufsize=1,
        )

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.err.close()
        os.unlink(self.errpath)

    def judge(self, text):
        """The verdict on one text; restarts the process when it dies or hangs."""
        try:
            self.proc.stdin.write(json.dumps(text) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else None
        if line:
            return json.loads(line)
        if line is None:
            self.proc.kill()
            v = {"xla": "timeout", "xla_error": f"no verdict in {self.timeout} s"}
        else:
            rc = self.proc.wait()
            self.err.flush()
            with open(self.errpath, encoding="utf-8", errors="replace") as f:
                v = {"xla": "crash", "xla_error": crash_line(f.read(), rc)}
        self.stop()
        self.start()
        return v


def judge_all(entries, python, jobs, timeout):
    """Verdicts for all texts: `jobs` workers (every jobs-th text each), one thread each."""
    verdicts = [None] * len(entries)
    shares = [list(range(k, len(entries), jobs)) for k in range(jobs)]
    done = [0]
    lock = threading.Lock()

    def run(share):
        w = Worker(python, timeout)
        try:
            for i in share:
                verdicts[i] = w.judge(entries[i]["text"])
                with lock:
                    done[0] += 1
                    if done[0] % 500 == 0:
                        print(f"  {done[0]}/{len(entries)}", file=sys.stderr)
        finally:
            w.stop()

    threads = [threading.Thread(target=run, args=(s,)) for s in shares]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return verdicts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--git-dir", help="git directory of an openxla/xla clone holding COMMIT")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per text (default 60)")
    ap.add_argument("--python", default=sys.executable, help="the Python with jaxlib 0.10.2")
    ap.add_argument("--list", action="store_true", help="only print the texts found (origin, index, line, bytes)")
    args = ap.parse_args()
    if args.worker:
        worker()
        return
    if not args.git_dir:
        ap.error("--git-dir is required")
    if args.python == sys.executable:
        import jaxlib

        if jaxlib.__version__ != "0.10.2":
            sys.exit(f"jaxlib is {jaxlib.__version__}; the corpus records jaxlib 0.10.2's verdicts")
    t0 = time.time()
    entries, missing, too_big = collect(args.git_dir)
    if args.list:
        for e in entries:
            print(f"{e['origin']}\t{e['index']}\t{e['line']}\t{len(e['text'].encode())}")
        return
    print(f"{len(entries)} texts from XLA {COMMIT}; judging with {args.jobs} worker(s)", file=sys.stderr)
    verdicts = judge_all(entries, args.python, max(1, args.jobs), args.timeout)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        for e, v in zip(entries, verdicts):
            row = {
                "origin": e["origin"],
                "index": e["index"],
                "line": e["line"],
                "xla": v["xla"],
                "xla_error": v["xla_error"],
                "text": e["text"],
            }
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    counts = {}
    for v in verdicts:
        counts[v["xla"]] = counts.get(v["xla"], 0) + 1
    print(
        f"wrote {len(entries)} texts to {args.out} in {time.time() - t0:.0f} s: "
        + ", ".join(f"{k} {counts[k]}" for k in sorted(counts)),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
