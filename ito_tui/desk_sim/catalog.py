"""The simulated desk's catalogue: GPU SKUs, model sizes, target capabilities and seeded bookings.

Everything here is data plus pure functions of it. `seed_bookings(now)` is deterministic
given `now`; IPs, hostnames and host-key fingerprints are illustrative data only (private
address ranges, `SHA256:` fingerprint strings, never key material).
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Literal

from ito_tui.contract import (
    Booking,
    BookingStatus,
    Fabric,
    FabricKind,
    Node,
    SshInfo,
    model_params,
)

from .gate_batteries import GateSpec, gate_battery
from .targets import TARGET_CAPABILITIES, TARGET_PROFILES, TargetProfile

__all__ = [
    "GPU_SKUS",
    "MODEL_ARCHS",
    "MODEL_SIZES",
    "TARGET_CAPABILITIES",
    "TARGET_PROFILES",
    "GateSpec",
    "GpuSku",
    "ModelArch",
    "TargetProfile",
    "arch_for",
    "gate_battery",
    "seed_bookings",
]


# ---------------------------------------------------------------- GPUs


@dataclass(frozen=True)
class GpuSku:
    """A GPU model as the planner sees it (dense peaks, not sparsity marketing numbers)."""

    name: str
    architecture: Literal["hopper", "blackwell"]
    hbm_gib: float
    """Usable device memory as the driver reports it (e.g. 81559 MiB on an H100 80GB)."""
    hbm_tb_per_s: float
    peak_bf16_tflops: float
    peak_fp8_tflops: float
    nvlink_gb_per_s: float
    """Per-GPU NVLink bandwidth (one direction), the intra-node fabric."""
    list_price_usd_per_gpu_hour: Decimal
    mfu_bf16: float
    """Model FLOPs utilisation of an 8B dense model in bf16 with torch.compile (torchtitan-like)."""
    float8_speedup: float
    """Throughput gain of float8 rowwise over bf16 for an 8B model (more on high-bandwidth HBM)."""
    mxfp8_speedup: float | None
    """Gain of MX-format fp8 over bf16; None where tensor cores lack block scaling (Hopper)."""

    @property
    def supports_mxfp8(self) -> bool:
        return self.mxfp8_speedup is not None


GPU_SKUS: Mapping[str, GpuSku] = {
    # 8B bf16 + compile at MFU 0.39 gives ≈ 6.7K tokens/s/GPU; float8 x1.28 ≈ 8.5K (torchtitan).
    "H100-SXM-80GB": GpuSku(
        name="H100-SXM-80GB",
        architecture="hopper",
        hbm_gib=79.6,
        hbm_tb_per_s=3.35,
        peak_bf16_tflops=989.0,
        peak_fp8_tflops=1979.0,
        nvlink_gb_per_s=450.0,
        list_price_usd_per_gpu_hour=Decimal("2.49"),
        mfu_bf16=0.39,
        float8_speedup=1.28,
        mxfp8_speedup=None,
    ),
    # Same tensor cores as H100, 1.4x the HBM bandwidth: float8 reaches ≈ 10.9K tokens/s/GPU.
    "H200-SXM-141GB": GpuSku(
        name="H200-SXM-141GB",
        architecture="hopper",
        hbm_gib=140.4,
        hbm_tb_per_s=4.8,
        peak_bf16_tflops=989.0,
        peak_fp8_tflops=1979.0,
        nvlink_gb_per_s=450.0,
        list_price_usd_per_gpu_hour=Decimal("3.29"),
        mfu_bf16=0.41,
        float8_speedup=1.56,
        mxfp8_speedup=None,
    ),
    "B200-SXM-180GB": GpuSku(
        name="B200-SXM-180GB",
        architecture="blackwell",
        hbm_gib=179.1,
        hbm_tb_per_s=8.0,
        peak_bf16_tflops=2250.0,
        peak_fp8_tflops=4500.0,
        nvlink_gb_per_s=900.0,
        list_price_usd_per_gpu_hour=Decimal("4.99"),
        mfu_bf16=0.37,
        float8_speedup=1.22,
        mxfp8_speedup=1.32,
    ),
}
"""GPU SKUs the desk knows, by name; `list(GPU_SKUS)` is the capabilities' `gpu_skus`."""


# ---------------------------------------------------------------- models


@dataclass(frozen=True)
class ModelArch:
    """The shape of a dense Llama-style decoder, enough for memory and FLOPs estimates."""

    size: str
    params: float
    layers: int
    hidden: int
    heads: int
    vocab: int
    in_catalog: bool = True

    @property
    def layer_params(self) -> float:
        """Parameters of one transformer block (total minus input and output embeddings)."""
        return max(self.params - 2 * self.vocab * self.hidden, self.params * 0.5) / self.layers


MODEL_SIZES: tuple[str, ...] = ("150M", "1.5B", "8B", "70B", "405B")
"""Model sizes the desk offers (capabilities' `model_sizes`); other sizes are extrapolated."""

MODEL_ARCHS: Mapping[str, ModelArch] = {
    "150M": ModelArch("150M", 150e6, 12, 768, 12, 32_000),
    "1.5B": ModelArch("1.5B", 1.5e9, 24, 2048, 16, 128_256),
    "8B": ModelArch("8B", 8.03e9, 32, 4096, 32, 128_256),
    "70B": ModelArch("70B", 70.6e9, 80, 8192, 64, 128_256),
    "405B": ModelArch("405B", 405.9e9, 126, 16384, 128, 128_256),
}
"""Llama 3-style shapes for the catalogue sizes (8B/70B/405B are Llama 3.1's)."""


def arch_for(model_size: str) -> ModelArch:
    """The architecture of `model_size`: the catalogue's, or a Llama-proportioned extrapolation.

    Off-catalogue sizes keep Llama's aspect ratio (hidden ≈ 128 × layers, so params ≈
    12 · layers · hidden² ≈ 196,608 · layers³), which is all the estimator needs.
    """
    known = MODEL_ARCHS.get(model_size)
    if known is not None:
        return known
    params = model_params(model_size)
    layers = max(2, round((max(params, 1.0) / 196_608) ** (1 / 3)))
    hidden = max(128, round(math.sqrt(max(params, 1.0) / (12 * layers)) / 128) * 128)
    return ModelArch(
        size=model_size,
        params=params,
        layers=layers,
        hidden=hidden,
        heads=max(1, hidden // 128),
        vocab=32_000 if params < 1e9 else 128_256,
        in_catalog=False,
    )


# ---------------------------------------------------------------- seeded bookings


@dataclass(frozen=True)
class _SeedBooking:
    booking_id: str
    status: BookingStatus
    sku: str
    nodes: int
    fabric: FabricKind
    gbit_per_s_per_gpu: float
    starts_in_h: float
    ends_in_h: float
    price: str
    site: str
    subnet: str
    ssh_port: int = 22
    jump_host: str | None = None
    unhealthy: tuple[int, ...] = ()


_SEEDS: tuple[_SeedBooking, ...] = (
    _SeedBooking(
        "bk_h100_1n", BookingStatus.completed, "H100-SXM-80GB", 1,
        FabricKind.infiniband, 400.0, -20, 21 * 24, "2.49", "fra1", "10.20.1",
    ),
    # Began 9 days ago: the demo's previous run (`history.py`, about a week) ran in it.
    _SeedBooking(
        "bk_h100_4n_ib", BookingStatus.completed, "H100-SXM-80GB", 4,
        FabricKind.infiniband, 400.0, -9 * 24, 14 * 24, "2.49", "fra1", "10.20.8",
        jump_host="bastion.fra1.desk.example.net",
    ),
    _SeedBooking(
        "bk_h200_2n_roce", BookingStatus.completed, "H200-SXM-141GB", 2,
        FabricKind.roce, 200.0, -6, 10 * 24, "3.29", "ams2", "172.18.4", ssh_port=2222,
        jump_host="bastion.ams2.desk.example.net",
    ),
    _SeedBooking(
        "bk_b200_16n_ib", BookingStatus.completed, "B200-SXM-180GB", 16,
        FabricKind.infiniband, 400.0, -12, 30 * 24, "4.99", "iad3", "10.64.16",
        jump_host="bastion.iad3.desk.example.net", unhealthy=(11,),
    ),
    _SeedBooking(
        "bk_h100_8n_eth", BookingStatus.completed, "H100-SXM-80GB", 8,
        FabricKind.ethernet, 25.0, -3, 7 * 24, "1.89", "waw1", "192.168.40",
        jump_host="gw.waw1.desk.example.net",
    ),
    _SeedBooking(
        "bk_h200_1n_pending", BookingStatus.pending, "H200-SXM-141GB", 1,
        FabricKind.roce, 200.0, 48, 9 * 24, "3.29", "ams2", "172.18.9", ssh_port=2222,
    ),
    _SeedBooking(
        "bk_h100_2n_expired", BookingStatus.expired, "H100-SXM-80GB", 2,
        FabricKind.roce, 200.0, -20 * 24, -6 * 24, "2.29", "fra1", "10.20.3",
        jump_host="bastion.fra1.desk.example.net",
    ),
    _SeedBooking(
        "bk_b200_2n_cancelled", BookingStatus.cancelled, "B200-SXM-180GB", 2,
        FabricKind.infiniband, 400.0, 24, 5 * 24, "5.19", "iad3", "10.64.2",
    ),
)  # fmt: skip


def _fingerprint(booking_id: str, hostname: str) -> str:
    """A deterministic `SHA256:` host-key fingerprint string (data only, derived from names)."""
    digest = hashlib.sha256(f"ito-desk-seed|{booking_id}|{hostname}".encode()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def _booking(seed: _SeedBooking, base: datetime) -> Booking:
    stem = seed.booking_id.removeprefix("bk_").replace("_", "-")
    nodes = [
        Node(
            hostname=f"{stem}-{i + 1:02d}.{seed.site}.desk.internal",
            ip=f"{seed.subnet}.{11 + i}",
            gpus=8,
            healthy=i not in seed.unhealthy,
        )
        for i in range(seed.nodes)
    ]
    return Booking(
        booking_id=seed.booking_id,
        status=seed.status,
        gpu_sku=seed.sku,
        gpus_per_node=8,
        node_count=seed.nodes,
        nodes=nodes,
        ssh=SshInfo(
            user="ito",
            port=seed.ssh_port,
            jump_host=seed.jump_host,
            host_key_fingerprints=[_fingerprint(seed.booking_id, n.hostname) for n in nodes],
        ),
        fabric=Fabric(kind=seed.fabric, gbit_per_s_per_gpu=seed.gbit_per_s_per_gpu),
        starts_at=base + timedelta(hours=seed.starts_in_h),
        ends_at=base + timedelta(hours=seed.ends_in_h),
        price_usd_per_gpu_hour=Decimal(seed.price),
    )


def seed_bookings(now: datetime) -> list[Booking]:
    """The desk's seeded bookings, windows relative to `now` floored to the hour.

    Deterministic given `now`. Stable ids: `bk_h100_1n` and `bk_h100_4n_ib` are the planner's
    worked examples; `bk_h200_1n_pending`, `bk_h100_2n_expired` and `bk_b200_2n_cancelled`
    cannot take a run; `bk_b200_16n_ib` has one unhealthy node; `bk_h100_8n_eth` is cheap
    but its Ethernet fabric is too slow for synchronous data parallelism of large models.
    """
    base = now.replace(minute=0, second=0, microsecond=0)
    return [_booking(seed, base) for seed in _SEEDS]
