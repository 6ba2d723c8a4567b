"""The simulated Itô desk backend (FastAPI + SQLite): API.md over a deterministic simulator."""

# ruff: noqa: E402  (the package's imports follow build_models(), on purpose)

from ito_tui.contract import build_models

# The contract builds its models lazily. A server uses nearly all of them, and they
# must be built before the routers below are defined: FastAPI makes an adapter per
# body parameter then, and a model first built inside `Body(alias=...)` warns.
build_models()

from .app import create_app
from .config import DEMO_SPEED, SCENARIOS, SimConfig
from .openapi import openapi_document
from .server import main

__all__ = ["DEMO_SPEED", "SCENARIOS", "SimConfig", "create_app", "main", "openapi_document"]
