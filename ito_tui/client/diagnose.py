"""Checks of the v1.1 "diagnosing a run" answers against their questions: log pages, the fleet.

A page of log lines must be the one asked for (before `before_seq`, oldest first, at
most `limit`, matching the filters) or the scrollback would show lines twice, out of
order or from the wrong rank; a fleet's rows are keyed by hostname, replica id and GPU
index, so a duplicate among them is an answer no view can show faithfully. Each
mismatch is a ProtocolError naming the endpoint and the field. Telemetry asked for some
open metrics keeps only those (`only_metrics`): a backend ignoring `metric=` costs the
bank's bounded name slots nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ito_tui.contract import Fleet, LogPage, TelemetryPage

from .errors import ProtocolError, ValidationFailed, cut_text
from .loglines import LogQuery

__all__ = ["check_fleet", "check_log_page", "log_query", "only_metrics"]


def log_query(
    endpoint: str,
    ranks: Sequence[int],
    level: str | None,
    sources: Sequence[str],
    q: str | None,
) -> LogQuery:
    """The filters as a `LogQuery`; ValidationFailed (before any request) when one is not valid."""
    try:
        return LogQuery.of(ranks, level, sources, q)
    except ValueError as exc:
        raise ValidationFailed(str(exc), endpoint=endpoint) from None


def check_log_page(
    endpoint: str, page: LogPage, query: LogQuery, *, before_seq: int | None, limit: int
) -> None:
    """`page` is what `GET …/logs/page` was asked for (see `ItoClient.log_page`)."""
    items = page.items
    if len(items) > limit:
        raise ProtocolError(
            f"{endpoint}: {len(items)} lines, asked for at most {limit}",
            field="items",
            endpoint=endpoint,
        )
    previous: int | None = None
    for index, line in enumerate(items):
        if before_seq is not None and line.seq >= before_seq:
            raise ProtocolError(
                f"{endpoint}: item {index} has seq {line.seq}, asked for lines before {before_seq}",
                field=f"items.{index}.seq",
                endpoint=endpoint,
            )
        if previous is not None and line.seq <= previous:
            raise ProtocolError(
                f"{endpoint}: item {index} has seq {line.seq} after seq {previous}; "
                "asked for oldest first",
                field=f"items.{index}.seq",
                endpoint=endpoint,
            )
        mismatch = query.mismatch(line, text_cut=line.cut)
        if mismatch is not None:
            raise ProtocolError(
                f"{endpoint}: item {index} (seq {line.seq}) has {mismatch}",
                field=f"items.{index}",
                endpoint=endpoint,
            )
        previous = line.seq
    following = page.next_before_seq
    bound = items[0].seq if items else before_seq
    if following is not None and bound is not None and following > bound:
        raise ProtocolError(
            f"{endpoint}: next_before_seq {following} would page forwards (from {bound})",
            field="next_before_seq",
            endpoint=endpoint,
        )


def _unique(endpoint: str, field: str, values: Iterable[object], noun: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        key = str(value)
        if key in seen:
            raise ProtocolError(
                f"{endpoint}: {noun} {cut_text(key, 80)} is listed twice",
                field=field.format(index=index),
                endpoint=endpoint,
            )
        seen.add(key)


def check_fleet(endpoint: str, fleet: Fleet) -> None:
    """Hostnames, replica ids and each node's GPU indices are unique."""
    _unique(endpoint, "nodes.{index}.hostname", (n.hostname for n in fleet.nodes), "node")
    _unique(
        endpoint, "replicas.{index}.replica_id", (r.replica_id for r in fleet.replicas), "replica"
    )
    for i, node in enumerate(fleet.nodes):
        _unique(
            endpoint,
            f"nodes.{i}.gpus.{{index}}.index",
            (g.index for g in node.gpus),
            f"GPU of node {cut_text(node.hostname, 80)}:",
        )


def only_metrics(page: TelemetryPage, names: Sequence[str]) -> TelemetryPage:
    """`page` with each sample's `metrics` cut to `names` (the page itself if nothing was
    extra)."""
    wanted = set(names)
    if all(wanted.issuperset(item.metrics) for item in page.items):
        return page
    items = [
        item
        if wanted.issuperset(item.metrics)
        else item.model_copy(
            update={"metrics": {k: v for k, v in item.metrics.items() if k in wanted}}
        )
        for item in page.items
    ]
    return page.model_copy(update={"items": items})
