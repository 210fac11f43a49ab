"""Makes packages unimportable in a test's subprocess, as if they were not installed: with this folder on
PYTHONPATH, Python imports this module at start, and an import of any top-level package named in
JUDGE_TEST_UNIMPORTABLE (comma-separated) raises ModuleNotFoundError, as a missing package does.
(tests/test_install_extras.py: the engine's commands with none of the install extras' packages.)"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

_BLOCKED = frozenset(filter(None, os.environ.get("JUDGE_TEST_UNIMPORTABLE", "").split(",")))


class Unimportable(MetaPathFinder):
    """First on the meta path: refuses the blocked packages before any finder looks for them."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


if _BLOCKED:
    sys.meta_path.insert(0, Unimportable())
