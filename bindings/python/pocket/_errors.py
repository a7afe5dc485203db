"""The one exception type Pocket raises for runtime failures."""


class PocketError(RuntimeError):
    """A failure reported by the Pocket runtime.

    Attributes:
        code: the stable pk_status number (see pocket.h), e.g. 2 for INVALID_PROGRAM.
        status: its name, e.g. "INVALID_PROGRAM".
        message: what went wrong, naming the file, method, input or op.
    """

    def __init__(self, code: int, status: str, message: str):
        super().__init__(f"[{status}] {message}")
        self.code = code
        self.status = status
        self.message = message
