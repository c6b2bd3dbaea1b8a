"""Suite-wide ordering: the tests against a real llama.cpp server run last.

``scripts/test`` installs that server (a first compile of about four minutes) beside the
rest of the suite; running its tests last lets the compile finish while the others run.
On pytest-xdist's workers (scripts/test runs two) the order is the order in which tests are
handed out, so those tests still start last, and wait for the build's exit status.
"""

from __future__ import annotations

import pytest

#: test files that need what scripts/test sets up in the background
LAST = ("test_llama_server.py",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.path.name in LAST)  # stable: every other order kept
