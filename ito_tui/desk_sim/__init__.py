"""The simulated Itô desk backend (FastAPI + SQLite): API.md over a deterministic simulator."""

from .app import create_app
from .config import DEMO_SPEED, SCENARIOS, SimConfig
from .openapi import openapi_document
from .server import main

__all__ = ["DEMO_SPEED", "SCENARIOS", "SimConfig", "create_app", "main", "openapi_document"]
