"""Write the contract's OpenAPI document into the package, from the simulator that serves it.

`ito-tui contract` prints this file, so the client needs no FastAPI; a test checks it
equals what desk_sim serves at /openapi.json. Run after changing the contract or the
simulator's routes (needs the `demo` extra):

    .venv/bin/python scripts/openapi.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ito_tui.commands.local import OPENAPI  # noqa: E402
from ito_tui.desk_sim import openapi_document  # noqa: E402


def render(doc: object) -> str:
    """The file's text: what `ito-tui contract` prints."""
    return json.dumps(doc, indent=2) + "\n"


def main() -> int:
    target = ROOT.joinpath("ito_tui", *OPENAPI)
    target.write_text(render(openapi_document()), encoding="utf-8")
    print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
