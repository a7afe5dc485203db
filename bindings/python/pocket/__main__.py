"""`python -m pocket ...` is the `pocket` command."""

import sys

from pocket.cli import main

sys.exit(main())
