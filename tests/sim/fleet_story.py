"""What the event stream says the fleet looks like: folded from the fleet's events.

Tests compare this story with `GET /v1/runs/{id}/fleet` snapshots: a snapshot names the
last event it reflects (`last_event_seq`), so folding the events up to that seq must give
exactly its node states, straggler flags, replica states and quorum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Story:
    nodes: dict[str, str]
    """hostname -> state (healthy, degraded, failed, replaced)."""
    replica_of: dict[str, str]
    replicas: dict[str, str]
    """replica_id -> state (healthy, lost, recovering)."""
    quorum_id: int = 1
    participants: int = 0
    stragglers: set[str] = field(default_factory=set)

    @classmethod
    def start(cls, first: dict[str, Any]) -> Story:
        """The fleet as a run starts (from a snapshot taken before any fleet event)."""
        assert all(n["state"] == "healthy" for n in first["nodes"])
        return cls(
            nodes={n["hostname"]: "healthy" for n in first["nodes"]},
            replica_of={n["hostname"]: n["replica_id"] for n in first["nodes"]},
            replicas={r["replica_id"]: "healthy" for r in first["replicas"]},
            participants=len(first["replicas"]),
        )

    def apply(self, envelope: dict[str, Any]) -> None:
        type_, data = envelope["type"], envelope["data"]
        host = data.get("hostname")
        if type_ == "node.failed":
            self.nodes[host] = "failed"
            self.replicas[self.replica_of[host]] = "lost"
        elif type_ == "node.replaced":
            self.nodes[host] = "replaced"
            spare = data["replaced_by"]
            self.nodes[spare] = "healthy"
            self.replica_of[spare] = self.replica_of[host]
            self.replicas[self.replica_of[host]] = "recovering"
        elif type_ == "node.degraded":
            self.nodes[host] = "degraded"
        elif type_ == "node.recovered":
            self.nodes[host] = "healthy"
        elif type_ == "straggler.detected":
            self.stragglers.add(host)
        elif type_ == "straggler.cleared":
            self.stragglers.discard(host)
        elif type_ == "quorum.changed":
            self.quorum_id, self.participants = data["quorum_id"], data["participants"]
        elif type_ == "fault.recovered":
            self.replicas = dict.fromkeys(self.replicas, "healthy")

    def mismatches(self, snap: dict[str, Any]) -> list[str]:
        """Where `snap` disagrees with this story (empty: consistent)."""
        out: list[str] = []
        shown = {n["hostname"]: n for n in snap["nodes"]}
        if set(shown) != set(self.nodes):
            out.append(f"nodes {sorted(shown)} != {sorted(self.nodes)}")
        for host, state in self.nodes.items():
            if host in shown and shown[host]["state"] != state:
                out.append(f"{host} is {shown[host]['state']}, the stream says {state}")
            if host in shown and shown[host]["straggler"] != (host in self.stragglers):
                out.append(f"{host} straggler={shown[host]['straggler']}")
        for replica in snap["replicas"]:
            want = self.replicas[replica["replica_id"]]
            if replica["state"] != want:
                out.append(f"{replica['replica_id']} is {replica['state']}, stream: {want}")
        quorum = snap["quorum"]
        if (quorum["quorum_id"], quorum["participants"]) != (self.quorum_id, self.participants):
            out.append(f"quorum {quorum} != {self.quorum_id}/{self.participants}")
        return out


def story_at(first: dict[str, Any], envelopes: list[dict[str, Any]], seq: int) -> Story:
    """The story of every event up to and including `seq`."""
    story = Story.start(first)
    for envelope in envelopes:
        if envelope["seq"] <= seq:
            story.apply(envelope)
    return story
