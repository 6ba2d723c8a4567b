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
        "from ito_tui.client.adapters import RUN_PAGE\n"
        'page = RUN_PAGE().validate_json(b\'{"items": [], "next_cursor": null}\')\n'
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


def test_the_event_models_load_only_when_a_stream_or_an_event_name_is_used() -> None:
    # A command that sends requests only (`ito-tui runs --json`) never defines the ~40
    # event classes (~15 ms); every name stays importable from the packages all the same.
    got = _run(
        "import json, sys\n"
        "from ito_tui.client import ItoClient\n"
        "from ito_tui.client.adapters import RUN_PAGE\n"
        "import ito_tui.commands.runs\n"
        'RUN_PAGE().validate_json(b\'{"items": [], "next_cursor": null}\')\n'
        "client = ItoClient('http://127.0.0.1:9', token=None)\n"
        "before = sorted(m for m in ('ito_tui.contract.events', 'ito_tui.client.stream')"
        " if m in sys.modules)\n"
        "stream = client.events('run-1')\n"
        "import ito_tui.client, ito_tui.contract\n"
        "from ito_tui.client import ConnectionState, EventStream\n"
        "from ito_tui.contract import EventBase, parse_event\n"
        "names = [n for n in ito_tui.contract.__all__ if not hasattr(ito_tui.contract, n)]\n"
        "names += [n for n in ito_tui.client.__all__ if not hasattr(ito_tui.client, n)]\n"
        'event = parse_event(b\'{"seq": 1, "run_id": "run-1", "type": "x.y",'
        ' "ts": "2026-01-01T00:00:00Z", "data": {}}\')\n'
        "print(json.dumps({'before': before, 'stream': isinstance(stream, EventStream),"
        " 'state': ConnectionState().status, 'unresolved': names,"
        " 'event': type(event).__name__, 'is_event': isinstance(event, EventBase)}))\n"
    )
    assert got["before"] == []
    assert got["stream"] is True and got["state"] == "connecting"
    assert got["unresolved"] == []
    assert got["event"] == "UnknownEvent" and got["is_event"] is True
