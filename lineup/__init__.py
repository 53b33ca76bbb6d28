"""The ``lineup`` entry point: engine and app wired together (``lineup.cli``)."""
