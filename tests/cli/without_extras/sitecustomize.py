"""Hides packages from a test subprocess as if they were not installed.

Put this directory on PYTHONPATH and list top-level import names in
`ITO_TEST_HIDE_PACKAGES` (comma-separated): importing one of them, or looking
it up with importlib.util.find_spec, fails with ModuleNotFoundError, as in an
install without the extra that provides it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

HIDDEN = frozenset(filter(None, os.environ.get("ITO_TEST_HIDE_PACKAGES", "").split(",")))


class HidePackages:
    """A meta-path finder, first in line, that refuses the hidden packages."""

    @staticmethod
    def find_spec(
        name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, HidePackages())
