"""The main window's parts (``app.main_window``): its menus and their actions, its layout, the banner and the
status bar's job display."""
