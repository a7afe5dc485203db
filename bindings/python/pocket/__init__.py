"""Pocket: put a PyTorch model inside a phone app.

    import pocket
    program = pocket.export(model, (x,))     # needs torch (pip install pocket[export])
    program.save("model.pocket")
    m = pocket.load("model.pocket")          # the C++ runtime; no torch needed
    y = m.forward(x)
"""

from pocket._errors import PocketError

__all__ = ["PocketError", "Module", "load", "export", "Program"]
__version__ = "0.1.0"


def __getattr__(name):
    # Each side is imported when first asked for: the run side needs the compiled runtime
    # (pocket._native), the export side needs torch. Importing pocket.exporter (or
    # pocket.llm.models) runs this file and must not need the runtime.
    if name in ("Module", "load"):
        from pocket import runtime

        return getattr(runtime, name)
    if name in ("export", "Program"):
        from pocket import exporter

        return getattr(exporter, name)
    raise AttributeError(f"module 'pocket' has no attribute {name!r}")
