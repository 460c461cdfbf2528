"""Runs XLA's own HLO parser (jaxlib `hlo_module_from_text`) on HLO text files.

Usage: python xla_parse.py [--time] FILE...   (or file names on stdin, one per line)

Prints one JSON object per file: {"path", "ok", "error"}; with --time, instead prints one
JSON object {"files", "bytes", "seconds", "failed"} where seconds is the total time spent
inside hlo_module_from_text (files read beforehand, best of --repeat N runs).
Exit status: 0 when every file parsed, 1 otherwise, 3 when jaxlib cannot be imported.
"""
import json
import sys
import time


def load_parser():
    try:
        from jaxlib import _hlo  # jaxlib 0.10.x
        return _hlo.hlo_module_from_text
    except Exception:
        pass
    try:
        from jaxlib import xla_extension as xe  # jaxlib 0.4.x
        return xe.hlo_module_from_text
    except Exception as e:  # pragma: no cover - depends on the environment
        print(json.dumps({"error": f"cannot import jaxlib's HLO parser: {e}"}))
        sys.exit(3)


def main(argv):
    timing = "--time" in argv
    repeat = 1
    args = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--time":
            pass
        elif a == "--repeat":
            i += 1
            repeat = int(argv[i])
        else:
            args.append(a)
        i += 1
    paths = args or [line.strip() for line in sys.stdin if line.strip()]
    parse = load_parser()
    texts = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            texts.append((p, f.read()))
    if timing:
        best = None
        failed = 0
        for _ in range(repeat):
            failed = 0
            t0 = time.perf_counter()
            for _, t in texts:
                try:
                    parse(t)
                except Exception:
                    failed += 1
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        total = sum(len(t.encode("utf-8")) for _, t in texts)
        print(json.dumps({"files": len(texts), "bytes": total, "seconds": best, "failed": failed}))
        return 0 if failed == 0 else 1
    bad = 0
    for p, t in texts:
        try:
            parse(t)
            print(json.dumps({"path": p, "ok": True, "error": None}))
        except Exception as e:
            bad += 1
            print(json.dumps({"path": p, "ok": False, "error": str(e)}))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
