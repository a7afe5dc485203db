"""Pocket: put a PyTorch model inside a phone app.

    import pocket
    program = pocket.export(model, (x,))     # needs torch (pip install pocket[export])
    program.save("model.pocket")
    m = pocket.load("model.pocket")          # the C++ runtime; no torch needed
    y = m.forward(x)
"""

from pocket._errors import PocketError
from pocket.runtime import Module, load

__all__ = ["PocketError", "Module", "load", "export", "Program"]
__version__ = "0.1.0"


def __getattr__(name):
    # The export side needs torch; import it only when asked for.
    if name in ("export", "Program"):
        from pocket import exporter

        return getattr(exporter, name)
    raise AttributeError(f"module 'pocket' has no attribute {name!r}")
