"""``python -m agentsdk.cli``."""

import sys

from . import main

sys.exit(main())
