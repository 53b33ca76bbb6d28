"""The main window's parts (``app.main_window`` composes them): its panes and their sizes, its messages, the case,
report, gallery and step actions, the menus, the case line and title, the step on view and the running job."""
