"""``python -m optimizer`` runs the ``ladder`` CLI."""

from optimizer.cli import main

main()
