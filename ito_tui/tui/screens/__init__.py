"""The app's screens, one per module. Import them from their modules: nothing is
re-exported here, so opening one screen never imports the others (the run screens
load only when a run is opened)."""

__all__: list[str] = []
