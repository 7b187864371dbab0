"""Run a block as the user nobody: root may look at everything, so a look that fails (EACCES) is proven as
nobody, on real directories."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def as_nobody() -> Iterator[None]:
    """Run the block with the effective uid of nobody (the real uid stays root, which takes it back)."""
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
