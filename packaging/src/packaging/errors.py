"""The one error type of `pocket package`: a message naming what is missing or wrong."""


class PackageError(Exception):
    """A target cannot be built here, a tool is missing, or an artifact failed a check."""
