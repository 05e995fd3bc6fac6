"""The test suite (a package, so that its helpers import as ``tests._x`` for pytest and mypy alike)."""
