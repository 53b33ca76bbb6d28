"""``python -m lineup``: the ``lineup`` command."""

from lineup.cli import main

main()
