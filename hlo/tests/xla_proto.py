"""XLA's side of the HloModuleProto round trip (jaxlib's HLO parser, printer and proto code).

Usage: python xla_proto.py DIR

For every `NAME.hlo` (our printed text) and `NAME.pb` (our HloModuleProto of the same module)
in DIR, prints one JSON object per line:
    {"name", "ok", "error", "from_text", "from_proto"}
where from_text is XLA's printing of the module it parsed from our text and from_proto its
printing of the module it read from our proto; and writes `NAME.xla.pb`, XLA's own
HloModuleProto of our text, for our reader. Exit status 3 when jaxlib cannot be imported.
"""
import json
import os
import sys


def main(d):
    try:
        from jaxlib import _hlo
    except Exception as e:  # pragma: no cover - depends on the environment
        print(json.dumps({"error": "cannot import jaxlib._hlo: %s" % e}))
        return 3
    names = sorted(f[:-4] for f in os.listdir(d) if f.endswith(".hlo"))
    for n in names:
        out = {"name": n, "ok": False}
        try:
            with open(os.path.join(d, n + ".hlo"), encoding="utf-8") as f:
                m = _hlo.hlo_module_from_text(f.read())
            out["from_text"] = m.to_string()
            with open(os.path.join(d, n + ".xla.pb"), "wb") as f:
                f.write(m.as_serialized_hlo_module_proto())
            with open(os.path.join(d, n + ".pb"), "rb") as f:
                p = _hlo.HloModule.from_serialized_hlo_module_proto(f.read())
            out["from_proto"] = p.to_string()
            out["ok"] = True
        except Exception as e:
            out["error"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
