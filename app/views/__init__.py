"""PySide6 widgets of the Lineup workstation.

Widgets only show state and report what the analyst does (signals); ``app.state.AppState`` changes the case.
"""
