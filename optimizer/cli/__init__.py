"""The ``ladder`` command line: the composition root that wires the KB, the server and the optimizer.

Every command takes ``--json`` for machine-readable output; people get readable tables.
"""

from optimizer.cli.app import app, main

__all__ = ["app", "main"]
