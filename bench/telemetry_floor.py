"""The floor of `ito-tui telemetry RUN --csv` (bench #19): what any client pays.

    python bench/telemetry_floor.py URL RUN_ID TO_STEP      # token from ITO_TOKEN

The same page walk (`GET …/telemetry?since_seq=&to_step=`) with a bare `httpx.Client`,
`json.loads` of each page and the `csv` module writing the same columns: no
validation, no checks, no redaction.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys

import httpx

FIXED = ("seq", "ts", "stage", "step", "tokens_seen", "loss", "loss_z", "grad_norm", "lr",
         "tokens_per_s_per_gpu", "mfu_frac", "mem_max_reserved_gib")  # fmt: skip
NESTED = (("goodput", "scheduling_frac"), ("goodput", "runtime_frac"),
          ("goodput", "program_frac"), ("goodput", "ml_productivity_frac"))  # fmt: skip
MORE = ("interruptions_total", "interruptions_per_1k_gpu_hours")


def main() -> None:
    url, run_id, to_step = sys.argv[1], sys.argv[2], sys.argv[3]
    headers = {"Authorization": f"Bearer {os.environ['ITO_TOKEN']}"}
    names: list[str] | None = None
    since = 0
    out = sys.stdout
    with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
        while True:
            params = {"since_seq": since, "to_step": to_step}
            page = json.loads(c.get(f"/v1/runs/{run_id}/telemetry", params=params).content)
            items = page["items"]
            if not items:
                break
            buffer = io.StringIO()
            w = csv.writer(buffer, lineterminator="\n")
            if names is None:
                names = sorted(items[0].get("metrics") or {})
                w.writerow([*FIXED, *(f"{a}.{b}" for a, b in NESTED), *MORE, "spend_usd",
                            *(f"metrics.{n}" for n in names)])  # fmt: skip
            for s in items:
                g, m = s.get("goodput") or {}, s.get("metrics") or {}
                w.writerow([*(s.get(k) for k in FIXED), *(g.get(b) for _a, b in NESTED),
                            *(s.get(k) for k in MORE), s.get("spend_usd"),
                            *(m.get(n) for n in names)])  # fmt: skip
            out.write(buffer.getvalue())
            since = page.get("next_since_seq") or items[-1]["seq"]
    out.flush()


if __name__ == "__main__":
    main()
