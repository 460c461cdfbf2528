"""Installed by hlo-diff triage for the script it runs: when the script sets XLA_FLAGS itself
(as every multi-device CPU snippet does, for --xla_force_host_platform_device_count), triage's
own flags (its dump directory) are kept after the script's, and what the script set is logged."""
import os
import sys

_KEEP = os.environ.get("HLO_DIFF_TRIAGE_XLA_FLAGS", "").split()
_LOG = os.environ.get("HLO_DIFF_TRIAGE_XLA_FLAGS_LOG")


def _merged(value):
    words = value.split()
    return " ".join(words + [f for f in _KEEP if f not in words])


class _TriageEnviron(type(os.environ)):
    def __setitem__(self, key, value):
        if key == "XLA_FLAGS" and isinstance(value, str):
            if _LOG:
                try:
                    with open(_LOG, "a") as f:
                        f.write(value.replace("\n", " ") + "\n")
                except OSError:
                    pass
            value = _merged(value)
        super().__setitem__(key, value)

    def __delitem__(self, key):
        if key == "XLA_FLAGS" and _KEEP:
            self.__setitem__(key, "")
            return
        super().__delitem__(key)


if _KEEP:
    os.environ.__class__ = _TriageEnviron


def _chain():
    """Runs the sitecustomize this one hides, if the Python has one."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_chain()
