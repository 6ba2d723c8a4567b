"""What torchtitan, torchft, NCCL, torchrun and the kernel really write, as text templates.

Each function returns `Line`s (rank, node, replica, level, source, text) for one moment of
a run; `joblog.lines_for` stamps them with the event's clocks. The formats follow the
real tools so an operator's eye (and grep) finds what it would find on a node:

- torchtitan's metrics line (`train.py`, `log_freq` steps): `step: 120  loss:  3.2154
  grad_norm:  0.8512  memory: 58.31GiB(73.32%)  tps: 8,412  tflops: 391.65  mfu: 39.60%`
  (no `mfu` under fp8, where torchtitan cannot count FLOPs against a peak);
- torchrun's `[rankN]:` prefix on a rank's stderr, PyTorch's glog prefix on c10d lines
  (`[E1201 22:14:03.123456000 ProcessGroupNCCL.cpp:632]`);
- torchft's manager prefix `[replica_id/group_rank - step N]` and the lighthouse's
  `Quorum!` line; the NVIDIA driver's `NVRM: Xid (PCI:…): 79, …` kernel line.

Pure: every choice is a function of the seed and the event (`physics.uniform`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from .physics import uniform


@dataclass(frozen=True)
class Line:
    """One log line before it gets its seq and clocks."""

    text: str
    level: str = "info"
    source: str = "trainer"
    rank: int | None = None
    node: str | None = None
    replica_id: str | None = None


def short(hostname: str) -> str:
    """`b200-16n-ib-03.iad3.desk.internal` -> `b200-16n-ib-03`, as `hostname -s` prints it."""
    return hostname.split(".", 1)[0]


def glog(level: str, when: datetime, where: str) -> str:
    """PyTorch's c10d glog prefix: `[E1201 22:14:03.123456000 ProcessGroupNCCL.cpp:632]`."""
    return f"[{level}{when:%m%d %H:%M:%S}.{when.microsecond:06d}000 {where}]"


def trainer_metrics(
    step: int,
    loss: float,
    grad_norm: float,
    mem_gib: float,
    mem_pct: float,
    tps: float,
    tflops: float,
    mfu_pct: float | None,
) -> str:
    """torchtitan's metrics line, field widths as in `train.py` (`loss: nan` when diverged)."""
    whole_tps = round(tps) if math.isfinite(tps) else 0
    text = (
        f"step: {step:2}  loss: {loss:7.4f}  grad_norm: {grad_norm:7.4f}  "
        f"memory: {mem_gib:5.2f}GiB({mem_pct:.2f}%)  tps: {whole_tps:,}  tflops: {tflops:,.2f}"
    )
    if mfu_pct is not None:
        text += f"  mfu: {mfu_pct:.2f}%"
    return text


def xid_line(seed: int, node: str, gpu: int, key: object) -> Line:
    """The driver's kernel line when a GPU falls off the bus (Xid 79), as `dmesg` shows it."""
    bus = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)[gpu % 8]
    pid = 20_000 + int(uniform(seed, "xid-pid", key) * 40_000)
    return Line(
        f"{short(node)} kernel: NVRM: Xid (PCI:0000:{bus:02x}:00): 79, pid={pid}, "
        "name=python3, GPU has fallen off the bus.",
        level="error",
        source="system",
        node=node,
    )


def nccl_timeout(rank: int, node: str, when: datetime, coll_seq: int, ran_ms: int) -> Line:
    """The c10d watchdog line a rank writes when a collective outlives its timeout."""
    return Line(
        f"[rank{rank}]:{glog('E', when, 'ProcessGroupNCCL.cpp:632')} [Rank {rank}] Watchdog "
        f"caught collective operation timeout: WorkNCCL(SeqNum={coll_seq}, OpType=ALLREDUCE, "
        f"NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for {ran_ms} milliseconds "
        "before timing out.",
        level="error",
        source="nccl",
        rank=rank,
        node=node,
    )


TRACEBACK = (
    "Traceback (most recent call last):",
    '  File "/opt/torchtitan/torchtitan/train.py", line 678, in <module>',
    "    trainer.train()",
    '  File "/opt/torchtitan/torchtitan/train.py", line 598, in train',
    "    self.train_step(data_iterator)",
    '  File "/opt/torchtitan/torchtitan/train.py", line 512, in train_step',
    "    loss = self.forward_backward_step(input_dict, labels)",
    '  File "/usr/local/lib/python3.12/site-packages/torch/_tensor.py", line 626, in backward',
    "    torch.autograd.backward(",
    '  File "/usr/local/lib/python3.12/site-packages/torch/autograd/graph.py", line 823, in '
    "_engine_run_backward",
    "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine",
)


def traceback(rank: int, node: str, when: datetime) -> list[Line]:
    """The failing rank's Python traceback (error), its exception and torchrun's verdict
    (critical), each line with torchrun's `[rankN]:` prefix."""
    prefix = f"[rank{rank}]: "
    lines = [Line(prefix + t, "error", "trainer", rank, node) for t in TRACEBACK]
    lines.append(
        Line(
            prefix + "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/"
            "distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
            "critical",
            "trainer",
            rank,
            node,
        )
    )
    lines.append(
        Line(
            f"{glog('E', when, 'api.py:874')} failed (exitcode: 1) local_rank: {rank % 8} "
            f"(pid: {4100 + rank}) of binary: /usr/bin/python3 "
            "(torch.distributed.elastic.multiprocessing.errors.ChildFailedError)",
            "critical",
            "system",
            rank,
            node,
        )
    )
    return lines


def ft_prefix(replica_id: str, step: int | None) -> str:
    """torchft's manager log prefix."""
    return f"[{replica_id}/0 - step {step}]" if step is not None else f"[{replica_id}/0]"


def replica_lost(replica_id: str, node: str, step: int | None) -> list[Line]:
    return [
        Line(
            f"Lighthouse: replica {replica_id} heartbeat timed out after 5.0s "
            f"({short(node)} unreachable); removing it from the quorum",
            "warning",
            "torchft",
            replica_id=replica_id,
        ),
        Line(
            f"{ft_prefix(replica_id, step)} replica lost: {short(node)} stopped heartbeating",
            "error",
            "torchft",
            node=node,
            replica_id=replica_id,
        ),
    ]


def quorum(quorum_id: int, participants: int, min_replicas: int | None) -> Line:
    floor = f" min_replicas={min_replicas}" if min_replicas is not None else ""
    return Line(
        f"Lighthouse: Quorum! quorum_id={quorum_id} participants={participants}{floor}",
        "info",
        "torchft",
    )


def spare_joins(spare: str, failed: str, replica_id: str) -> list[Line]:
    return [
        Line(
            f"{short(spare)} node agent: admitted as spare replacing {short(failed)}; "
            "starting 8 workers (torchrun --nnodes=1 --nproc-per-node=8)",
            "info",
            "system",
            node=spare,
            replica_id=replica_id,
        ),
        Line(
            f"{ft_prefix(replica_id, 0)} joining quorum from {short(spare)} "
            "(lighthouse http://lighthouse:29510)",
            "info",
            "torchft",
            node=spare,
            replica_id=replica_id,
        ),
    ]


def recovering(replica_id: str, node: str, peer: str, step: int) -> list[Line]:
    return [
        Line(
            f"{ft_prefix(replica_id, 0)} healing required, fetching checkpoint metadata from "
            f"recover_src_manager_address='http://{short(peer)}:29512' max_step={step}",
            "warning",
            "torchft",
            node=node,
            replica_id=replica_id,
        ),
        Line(
            f"{ft_prefix(replica_id, step)} recovered: state_dict transferred from "
            f"{short(peer)}; participating in quorum",
            "info",
            "torchft",
            node=node,
            replica_id=replica_id,
        ),
    ]


DATALOADER_WARNINGS = (
    "dataloader: worker {w} waited {s:.1f}s for shard {shard} (object store latency); "
    "prefetch queue empty",
    "dataloader: skipped {n} samples longer than seq_len in shard {shard}",
    "UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max "
    "number of worker in current system is 12, which is smaller than what this DataLoader is "
    "going to create.",
)


def dataloader_warning(seed: int, rank: int, node: str, key: object) -> Line:
    pick = int(uniform(seed, "dl-pick", key) * len(DATALOADER_WARNINGS))
    text = DATALOADER_WARNINGS[pick].format(
        w=int(uniform(seed, "dl-w", key) * 16),
        s=1.5 + 6 * uniform(seed, "dl-s", key),
        shard=f"{int(uniform(seed, 'dl-shard', key) * 4096):05d}",
        n=1 + int(uniform(seed, "dl-n", key) * 40),
    )
    return Line(f"[rank{rank}]: {text}", "warning", "dataloader", rank, node)
