"""Run ``python -m tests.mutation``: see ``tests/mutation/command.py``."""

from __future__ import annotations

import sys

from tests.mutation.command import main

sys.exit(main())
