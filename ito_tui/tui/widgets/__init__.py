"""Reusable widgets, one per module; they are given data and never talk to the client.
Import them from their modules: nothing is re-exported here."""

__all__: list[str] = []
