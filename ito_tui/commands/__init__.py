"""Headless subcommands of `ito-tui` (one module per group); never imports textual."""

__all__: list[str] = []
