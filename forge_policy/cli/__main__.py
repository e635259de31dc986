"""``python -m forge_policy.cli``: the same as the ``forge-policy`` command."""

import sys

from forge_policy.cli import main

sys.exit(main())
