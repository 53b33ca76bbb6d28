"""``python -m engine.cli``: the engine's commands of ``lineup``."""

from engine.cli import main

main()
