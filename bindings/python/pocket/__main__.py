"""`python -m pocket ...` is the `pocket` command."""

from pocket.cli import run

run()
