"""PySide6 widgets of the Lineup workstation."""
