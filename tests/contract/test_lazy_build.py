"""The contract's models are built on first use, except in the simulator, which builds all.

Each check runs in a fresh interpreter: which models are built depends on what the
process has imported and used before, and this test process has used them all.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.sim.helpers import REFERENCE_SPEC

COUNT_BUILT = """
import json
from ito_tui.contract import EventBase, Request, Resource, _subclasses
models = [m for base in (Resource, Request, EventBase) for m in _subclasses(base)]
print(json.dumps({
    "total": len(models),
    "built": sorted(m.__name__ for m in models if m.__pydantic_complete__),
    "deferring": sum(m.model_config.get("defer_build") is True for m in models),
}))
"""


def _run(code: str) -> dict[str, object]:
    res = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    result: dict[str, object] = json.loads(res.stdout.splitlines()[-1])
    return result


def test_reading_a_run_list_builds_no_model_but_its_own() -> None:
    got = _run(
        "from ito_tui.client.api import _RUN_PAGE\n"
        'page = _RUN_PAGE().validate_json(b\'{"items": [], "next_cursor": null}\')\n'
        "assert page.items == []\n" + COUNT_BUILT
    )
    assert isinstance(got["total"], int) and got["total"] > 90
    built = got["built"]
    # The run list's adapter holds its own validator; built classes would mean
    # the contract built its models at import (all of them, ~110 ms).
    assert isinstance(built, list) and len(built) <= 3, built


def test_the_simulator_builds_every_model_before_its_routes_exist() -> None:
    # FastAPI wraps a body model in `Annotated[Model, Body(alias=...)]` and builds an
    # adapter of that while it silences pydantic's warning about the alias; a model
    # still deferred would be built later, at the first request, and warn then (-W error
    # turns that warning into the failure).
    got = _run(
        "import ito_tui.desk_sim\n"
        "from typing import Annotated\n"
        "from fastapi import Body\n"
        "from pydantic import TypeAdapter\n"
        "from ito_tui.contract import TrainingSpec\n"
        "adapter = TypeAdapter(Annotated[TrainingSpec, Body(alias='spec')])\n"
        f"adapter.validate_python({REFERENCE_SPEC!r})\n" + COUNT_BUILT
    )
    assert got["deferring"] == 0
    built = got["built"]
    assert isinstance(built, list) and len(built) == got["total"]
