"""The floor of `ito-tui logs RUN --tail N --json` (bench 18.16): what any client pays.

    python bench/logs_floor.py URL RUN_ID N      # token from ITO_TOKEN

The same page walk (`GET …/logs/page?before_seq=&limit=1000`, newest first, printed
oldest first) with a bare `httpx.Client`, `json.loads` of each page and one
`json.dumps` per line: no validation, no checks, no redaction, no inert text.
"""

from __future__ import annotations

import json
import os
import sys

import httpx


def main() -> None:
    url, run_id, wanted = sys.argv[1], sys.argv[2], int(sys.argv[3])
    headers = {"Authorization": f"Bearer {os.environ['ITO_TOKEN']}"}
    dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
    chunks: list[str] = []
    before: int | None = None
    with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
        while wanted > 0:
            params: dict[str, int] = {"limit": min(wanted, 1000)}
            if before is not None:
                params["before_seq"] = before
            page = json.loads(c.get(f"/v1/runs/{run_id}/logs/page", params=params).content)
            items = page["items"][-wanted:]
            chunks.append("".join(dumps(item) + "\n" for item in items))
            wanted -= len(items)
            before = page.get("next_before_seq")
            if before is None or not items:
                break
    for chunk in reversed(chunks):
        sys.stdout.write(chunk)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
