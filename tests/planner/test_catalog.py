"""The seeded desk and the catalogue: what the picker and the planner examples rely on."""

from __future__ import annotations

import base64
import ipaddress
from collections import Counter
from datetime import timedelta

from ito_tui.contract import Booking
from ito_tui.desk_sim.catalog import (
    GPU_SKUS,
    MODEL_SIZES,
    TARGET_CAPABILITIES,
    TARGET_PROFILES,
    arch_for,
    seed_bookings,
)

from .factories import NOW


def test_seed_has_the_required_variety() -> None:
    bookings = seed_bookings(NOW)
    assert len(bookings) >= 6
    assert {b.gpu_sku for b in bookings} == set(GPU_SKUS)
    assert {str(b.fabric.kind) for b in bookings} == {"infiniband", "roce", "ethernet"}
    statuses = Counter(str(b.status) for b in bookings)
    assert statuses["pending"] >= 1 and statuses["expired"] >= 1 and statuses["cancelled"] >= 1
    assert min(b.node_count for b in bookings) == 1
    assert max(b.node_count for b in bookings) == 16
    assert all(b.gpus_per_node == 8 for b in bookings)
    assert len({b.booking_id for b in bookings}) == len(bookings)
    assert sum(not n.healthy for b in bookings for n in b.nodes) == 1


def test_seed_has_the_planner_example_bookings() -> None:
    desk = {b.booking_id: b for b in seed_bookings(NOW)}
    one, four = desk["bk_h100_1n"], desk["bk_h100_4n_ib"]
    for booking in (one, four):
        assert booking.status == "completed"
        assert booking.gpu_sku == "H100-SXM-80GB"
        assert booking.starts_at <= NOW < booking.ends_at
    assert one.node_count == 1
    assert four.node_count == 4 and four.fabric.kind == "infiniband"


def test_nodes_ssh_and_fingerprints_are_data_only() -> None:
    for booking in seed_bookings(NOW):
        assert len(booking.nodes) == booking.node_count
        assert sum(n.gpus for n in booking.nodes) == booking.gpu_count
        assert all(ipaddress.ip_address(n.ip).is_private for n in booking.nodes)
        assert len({n.hostname for n in booking.nodes}) == booking.node_count
        fingerprints = booking.ssh.host_key_fingerprints
        assert len(fingerprints) == booking.node_count
        for fp in fingerprints:
            assert fp.startswith("SHA256:")
            assert len(base64.b64decode(fp.removeprefix("SHA256:") + "=")) == 32
        text = booking.model_dump_json()
        assert "PRIVATE KEY" not in text and "ssh-ed25519" not in text
        assert booking.ssh.user and 0 < booking.ssh.port < 65536


def test_windows_are_relative_to_now_and_consistent_with_status() -> None:
    for booking in seed_bookings(NOW):
        assert booking.starts_at < booking.ends_at
        if booking.status == "completed":
            assert booking.starts_at <= NOW < booking.ends_at
        if booking.status == "pending":
            assert booking.starts_at > NOW
        if booking.status == "expired":
            assert booking.ends_at < NOW
        assert booking.price_usd_per_gpu_hour > 0


def test_seed_is_deterministic_and_moves_with_now() -> None:
    assert seed_bookings(NOW) == seed_bookings(NOW)
    later = seed_bookings(NOW + timedelta(days=3))
    for a, b in zip(seed_bookings(NOW), later, strict=True):
        assert b.ends_at - a.ends_at == timedelta(days=3)
        assert a.ssh == b.ssh and a.nodes == b.nodes


def test_bookings_round_trip_the_wire() -> None:
    for booking in seed_bookings(NOW):
        assert Booking.model_validate_json(booking.model_dump_json()) == booking


def test_catalogue_lists() -> None:
    assert MODEL_SIZES == ("150M", "1.5B", "8B", "70B", "405B")
    assert set(TARGET_CAPABILITIES) == set(TARGET_PROFILES)
    assert any(TARGET_PROFILES[t].long_context for t in TARGET_CAPABILITIES)
    assert GPU_SKUS["B200-SXM-180GB"].supports_mxfp8
    assert not any(GPU_SKUS[s].supports_mxfp8 for s in ("H100-SXM-80GB", "H200-SXM-141GB"))


def test_architectures_match_their_sizes() -> None:
    for size in (*MODEL_SIZES, "3B", "13B", "34B", "1000B"):
        arch = arch_for(size)
        # Llama's params ≈ 12·L·h² + embeddings: the shape must roughly reproduce the size.
        approx = 12 * arch.layers * arch.hidden**2 + 2 * arch.vocab * arch.hidden
        assert 0.5 < approx / arch.params < 2.0, size
    assert arch_for("8B").in_catalog and not arch_for("13B").in_catalog
