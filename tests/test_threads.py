"""The embedded model's thread default: one thread per free core at most, from injected machine readings."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillgrad.config.schema import RoleConfig
from skillgrad.models import threads
from skillgrad.models.threads import CpuReadings, assign_threads, busy_now, cgroup_quota, choose_threads


@pytest.mark.parametrize(("affinity", "quota", "load", "models", "expected"), [
    (2, None, 0.0, 1, 2),      # idle 2-core laptop: both cores
    (2, None, 0.1, 1, 2),      # a little background noise does not cost a core
    (2, None, 0.9, 1, 1),      # one core taken by other work
    (2, None, 2.0, 1, 1),      # two busy loops beside it: one thread, never zero
    (2, None, 7.5, 1, 1),      # heavily oversubscribed machine
    (16, None, 0.0, 1, 16),
    (16, 4.0, 0.0, 1, 4),      # a container's quota caps it below the visible cores
    (16, 2.5, 0.0, 1, 2),      # a fractional quota rounds down
    (16, 0.5, 0.0, 1, 1),      # a quota under one core still gets one thread
    (8, None, 3.0, 1, 5),
    (8, None, 0.0, 2, 4),      # teacher and student from different files share the cores
    (8, None, 5.0, 2, 1),
    (1, None, 0.0, 1, 1),
])
def test_choice_never_exceeds_free_cores(affinity: int, quota: float | None, load: float, models: int,
                                         expected: int) -> None:
    choice = choose_threads(CpuReadings(affinity=affinity, quota=quota, load=load), models=models)
    assert choice.threads == expected
    assert choice.threads >= 1
    assert choice.threads * models <= max(models, choice.free_cores)  # one thread per free core at most


def test_description_names_the_inputs_and_the_override() -> None:
    text = choose_threads(CpuReadings(affinity=4, quota=2.0, load=1.0), models=2).describe()
    assert text.startswith("1 thread (1 of 4 cores free, quota 2, load 1.0, shared by 2 local models")
    assert "model.<role>.n_threads" in text
    event = choose_threads(CpuReadings(affinity=2, quota=None, load=0.0)).to_event()
    assert event == {"threads": 2, "free_cores": 2, "models": 1, "affinity": 2, "quota": None, "load": 0.0}


def test_cgroup_quota_formats(tmp_path: Path) -> None:
    v2 = tmp_path / "cpu.max"
    v1 = (tmp_path / "quota", tmp_path / "period")
    v2.write_text("200000 100000\n")
    assert cgroup_quota(v2, v1) == 2.0
    v2.write_text("max 100000\n")
    assert cgroup_quota(v2, v1) is None
    v2.unlink()
    v1[0].write_text("150000\n")
    v1[1].write_text("100000\n")
    assert cgroup_quota(v2, v1) == 1.5
    v1[0].write_text("-1\n")  # cgroup v1: unlimited
    assert cgroup_quota(v2, v1) is None
    v1[0].write_text("garbage")
    assert cgroup_quota(v2, v1) is None


def test_busy_now_reads_proc_stat_deltas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal: 100 jiffies pass, 25 of them idle -> 75 % busy
    samples = iter(["cpu 100 0 100 800 0 0 0 0 0 0\n", "cpu 150 0 125 825 0 0 0 0 0 0\n"])
    monkeypatch.setattr(threads.time, "sleep", lambda s: stat.write_text(next(samples)))
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 4)
    stat.write_text(next(samples))
    assert busy_now(0.0, stat) == pytest.approx(3.0)
    assert busy_now(0.0, tmp_path / "missing") is None


def test_assign_threads_counts_models_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillgrad.models.providers import local

    monkeypatch.setattr(local, "resolve_gguf", lambda model, role: Path(model or "bundled.gguf"))
    monkeypatch.setattr(threads, "read_cpus", lambda: CpuReadings(affinity=8, quota=None, load=0.0))
    same = {"teacher": RoleConfig(provider="local"), "student": RoleConfig(provider="local")}
    roles, choice = assign_threads(same)
    assert choice is not None and choice.models == 1 and choice.threads == 8  # one shared model: calls take turns
    assert roles["teacher"].n_threads == roles["student"].n_threads == 8

    other = "other.gguf"
    roles, choice = assign_threads({"teacher": RoleConfig(provider="local", model=other),
                                    "student": RoleConfig(provider="local")})
    assert choice is not None and choice.models == 2 and roles["teacher"].n_threads == 4

    assert roles["teacher"]._threads_auto and roles["student"]._threads_auto  # may follow the load later

    # a hand-set thread count is respected and counted as load for the automatic one
    roles, choice = assign_threads({"teacher": RoleConfig(provider="local", n_threads=3),
                                    "student": RoleConfig(provider="local", model=other)})
    assert roles["teacher"].n_threads == 3 and choice is not None and roles["student"].n_threads == 5

    # nothing local or nothing automatic: no reading at all
    monkeypatch.setattr(threads, "read_cpus", lambda: pytest.fail("read the machine without need"))
    fixed = {"teacher": RoleConfig(provider="local", n_threads=1), "student": RoleConfig(provider="openai")}
    assert assign_threads(fixed) == (fixed, None)


def test_retuned_threads_follow_free_cores_up_to_the_start_count() -> None:
    assert threads.retuned_threads(2, 1, busy=0.1, usable=2) == 2
    assert threads.retuned_threads(2, 1, busy=1.0, usable=2) == 1  # a busy process appeared: give it its core
    assert threads.retuned_threads(2, 1, busy=5.0, usable=2) == 1  # never below one
    assert threads.retuned_threads(1, 1, busy=0.0, usable=8) == 1  # never above the count chosen at start
    assert threads.retuned_threads(4, 2, busy=0.0, usable=4) == 2  # shared with another local model
    assert threads.retuned_threads(2, 1, busy=None, usable=2) == 2  # no reading: keep the count


def _auto(gguf_path: Path, n_threads: int) -> RoleConfig:
    """A local role whose thread count `assign_threads` chose (so it may follow the load)."""
    rc = RoleConfig(provider="local", model=str(gguf_path), n_threads=n_threads)
    rc._threads_auto = True
    return rc


def _answer_after_retune(p: object) -> int:
    """One real call after the re-read interval has passed; the thread count the model then runs with."""
    from skillgrad.models.base import Request
    from skillgrad.models.providers import local

    p._entry.checked -= local.RETUNE_SECONDS  # type: ignore[attr-defined]
    req = Request(messages=[{"role": "user", "content": "Say hi."}], max_tokens=4, temperature=0.0)
    assert asyncio.run(p(req)).usage.completion_tokens > 0  # type: ignore[operator]
    return int(p._entry.current)  # type: ignore[attr-defined]


def test_an_automatic_local_model_gives_cores_back_when_work_appears(
        gguf_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real embedded model: a load that appears mid-run lowers the thread count of an automatically
    sized model (not of a hand-set one), and the model still answers after the change."""
    from skillgrad.models.providers import local

    pool = local.LlamaPool()
    monkeypatch.setattr(local, "busy_others", lambda: 1.8)
    monkeypatch.setattr(local, "usable_cores", lambda: 2)
    try:
        p = local.LocalProvider(_auto(gguf_path, 2), "student", pool=pool)
        assert p._entry.adaptive and p._entry.current == 2
        assert _answer_after_retune(p) == 1
        # the work ends: the model takes the free cores again, on the second free reading in a row
        monkeypatch.setattr(local, "busy_others", lambda: 0.0)
        assert [_answer_after_retune(p), _answer_after_retune(p)] == [1, 2]
        hand = local.LocalProvider(RoleConfig(provider="local", model=str(gguf_path), n_threads=3), "t", pool=pool)
        assert _answer_after_retune(hand) == 3 and not hand._entry.adaptive
    finally:
        pool.clear()


def test_an_automatic_model_loaded_low_takes_the_cores_freed_later(
        gguf_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A count chosen while the 1-minute load average still remembered ended work is not a ceiling."""
    from skillgrad.models.providers import local

    pool = local.LlamaPool()
    monkeypatch.setattr(local, "busy_others", lambda: 0.0)
    monkeypatch.setattr(local, "usable_cores", lambda: 2)
    try:
        p = local.LocalProvider(_auto(gguf_path, 1), "student", pool=pool)
        assert [_answer_after_retune(p), _answer_after_retune(p)] == [1, 2]  # on the second free reading in a row
    finally:
        pool.clear()
