"""Entry point of `python -m components`."""

import sys

from components.tooling.cli import main

sys.exit(main())
