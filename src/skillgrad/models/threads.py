"""How many CPU threads the embedded model gets: one per core that is actually free, never more.

llama.cpp's worker threads spin while they wait for each other, so a thread without a core of its own
does not just slow its call down, it stalls the whole team (measured on a loaded 2-core machine: 8.7-78 s
per call with every core vs 1.0-2.5 s with one thread). The choice therefore counts the cores this
process may use (affinity, cgroup quota), subtracts the load other work puts on them, and splits what is
left between the local models that can run at the same time.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillgrad.config.schema import RoleConfig

FREE_SLACK = 0.25
CGROUP_V2 = Path("/sys/fs/cgroup/cpu.max")
CGROUP_V1 = (Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us"))


@dataclass(frozen=True)
class CpuReadings:
    affinity: int  # cores this process may run on
    quota: float | None  # cgroup CPU quota in cores (None = unlimited)
    load: float  # runnable work on those cores from other processes, in cores


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    free_cores: int
    models: int  # local models that can compute at the same time (they share the free cores)
    readings: CpuReadings

    def describe(self) -> str:
        r = self.readings
        quota = "" if r.quota is None else f", quota {r.quota:g}"
        share = f", shared by {self.models} local models" if self.models > 1 else ""
        return (f"{self.threads} thread{'s' if self.threads != 1 else ''} ({self.free_cores} of {r.affinity} cores "
                f"free{quota}, load {r.load:.1f}{share}; set model.<role>.n_threads to override)")

    def to_event(self) -> dict[str, Any]:
        return {"threads": self.threads, "free_cores": self.free_cores, "models": self.models, **asdict(self.readings)}


def choose_threads(readings: CpuReadings, models: int = 1) -> ThreadChoice:
    """Threads per local model: the free cores split between `models`, at least 1, never more than free."""
    usable = readings.affinity
    if readings.quota is not None:
        usable = min(usable, max(1, math.floor(readings.quota)))
    # A core counts as free when other work takes less than a quarter of it: a thread that shares its
    # core stalls the whole team at every barrier, while one thread fewer costs only a little speed.
    free = max(0, min(usable, math.floor(usable - readings.load + FREE_SLACK)))
    threads = max(1, free // max(1, models))
    return ThreadChoice(threads=threads, free_cores=free, models=max(1, models), readings=readings)


def affinity_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def cgroup_quota(v2: Path = CGROUP_V2, v1: tuple[Path, Path] = CGROUP_V1) -> float | None:
    """The CPU quota in cores (`cpu.max` "200000 100000" = 2.0), None when unlimited or unreadable."""
    try:
        parts = v2.read_text().split()
        if parts and parts[0] != "max":
            return int(parts[0]) / int(parts[1])
        if parts:
            return None
    except (OSError, ValueError, IndexError):
        pass
    try:
        quota, period = int(v1[0].read_text()), int(v1[1].read_text())
        return quota / period if quota > 0 and period > 0 else None
    except (OSError, ValueError):
        return None


def _cpu_times(stat: Path) -> tuple[int, int]:
    """(busy, total) jiffies summed over all CPUs from /proc/stat's first line."""
    fields = [int(x) for x in stat.read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already inside user/nice
    return total - idle, total


def busy_now(seconds: float = 0.2, stat: Path = Path("/proc/stat")) -> float | None:
    """Cores busy right now (sampled over `seconds`), or None where /proc/stat is missing.

    The 1-minute load average lags by about a minute: two busy loops started 10 s ago show as 0.3.
    This process sleeps while it samples, so what it sees is other work."""
    try:
        b0, t0 = _cpu_times(stat)
        time.sleep(seconds)
        b1, t1 = _cpu_times(stat)
    except (OSError, ValueError, IndexError):
        return None
    if t1 <= t0:
        return None
    return (b1 - b0) / (t1 - t0) * (os.cpu_count() or 1)


def read_cpus() -> CpuReadings:
    """The machine as it is now. Load is the larger of the 1-minute average and an instant sample:
    too few threads costs a little speed, too many costs nearly all of it."""
    try:
        load1 = os.getloadavg()[0]
    except (AttributeError, OSError):
        load1 = 0.0
    now = busy_now()
    cores = affinity_cores()
    # Both figures are machine-wide; a process pinned to some of the cores sees its share of them.
    share = cores / max(cores, os.cpu_count() or cores)
    return CpuReadings(affinity=cores, quota=cgroup_quota(),
                       load=round(max(load1, now if now is not None else 0.0) * share, 2))


def assign_threads(roles: dict[str, RoleConfig]) -> tuple[dict[str, RoleConfig], ThreadChoice | None]:
    """Fill `n_threads` of every local role left at 0 from one reading of the machine: roles that load
    the same file share one model (their calls take turns), different files compute side by side and
    split the free cores; threads set by hand elsewhere count as load."""
    from skillgrad.models.providers.local import resolve_gguf  # the provider module loads only when used

    auto = {r: rc for r, rc in roles.items() if rc.provider == "local" and not rc.n_threads}
    if not auto:
        return roles, None
    instances = {(resolve_gguf(rc.model, r), rc.n_ctx) for r, rc in auto.items()}
    fixed = sum(rc.n_threads for rc in roles.values() if rc.provider == "local" and rc.n_threads)
    readings = read_cpus()
    if fixed:
        readings = replace(readings, load=readings.load + fixed)
    choice = choose_threads(readings, models=len(instances))
    return {r: _auto_copy(rc, choice.threads) if r in auto else rc for r, rc in roles.items()}, choice


def _auto_copy(rc: RoleConfig, threads: int) -> RoleConfig:
    out = rc.model_copy(update={"n_threads": threads})
    out._threads_auto = True
    return out


def retuned_threads(ceiling: int, models: int, busy: float | None, usable: int) -> int:
    """The thread count for the next call of a model whose threads were chosen automatically: the cores
    free now (other work sampled while this model waits), never above the count chosen at the start."""
    if busy is None:
        return ceiling
    free = max(0, min(usable, math.floor(usable - busy + FREE_SLACK)))
    return max(1, min(ceiling, free // max(1, models)))


def busy_others(seconds: float = 0.1) -> float | None:
    """Cores other work keeps busy right now, as this process's share of the machine (see read_cpus)."""
    now = busy_now(seconds)
    if now is None:
        return None
    cores = affinity_cores()
    return now * cores / max(cores, os.cpu_count() or cores)


def usable_cores() -> int:
    quota = cgroup_quota()
    cores = affinity_cores()
    return cores if quota is None else min(cores, max(1, math.floor(quota)))
