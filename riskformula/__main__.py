"""``python -m riskformula`` runs the command line, the same as the ``riskformula`` program."""

import sys

from .cli import main

sys.exit(main())
