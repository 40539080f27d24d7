"""Per-task tables from the run rows: held-out before -> after with a 95% interval over seeds, cost, ratios."""

from __future__ import annotations

import math
import statistics
from typing import Any

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval(xs: list[float]) -> tuple[float, float, float]:
    """Mean and Student-t 95% interval over seeds (the interval collapses to the mean for one seed)."""
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, m, m
    h = T975.get(len(xs) - 1, 1.96) * statistics.stdev(xs) / math.sqrt(len(xs))
    return m, m - h, m + h


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by: dict[str, dict[str, Any]] = {}
    for sys_name in dict.fromkeys(r["system"] for r in rows):
        mine = [r for r in rows if r["system"] == sys_name]
        ok = [r for r in mine if "after" in r]
        s: dict[str, Any] = {"runs": len(mine), "ok": len(ok), "before": mine[0].get("before"),
                             "versions": sorted({str(r.get("version", "not recorded")) for r in mine}),
                             "errors": [r["error"] for r in mine if r.get("error")],
                             "exceptions": sum(r.get("exceptions", 0) or 0 for r in mine),
                             "failed_calls": sum(r["usage"]["failed_calls"] for r in mine),
                             "heldout_errors": sum(r.get("heldout_errors", 0) for r in mine)}
        if ok:
            s["after"] = interval([r["after"] for r in ok])
            s["gain"] = interval([r["after"] - r["before"] for r in ok])
            s["wall_s"] = statistics.fmean(r["wall_s"] for r in ok)
            s["calls"] = statistics.fmean(r["usage"]["calls"] for r in ok)
            s["tokens"] = statistics.fmean(r["usage"]["tokens"] for r in ok)
            s["steps"] = statistics.fmean(r.get("steps") or 0 for r in ok)
            timed = [r for r in ok if "step_tokens" in r["usage"]]
            if timed:  # steps begun and what was paid inside them (the system's own step markers)
                per = [r["usage"]["step_tokens"] / len(r["step_windows"]) for r in timed if r["step_windows"]]
                s["tokens_per_step"] = statistics.fmean(per) if per else None
                s["outside_steps"] = statistics.fmean(r["usage"]["tokens"] - r["usage"]["step_tokens"] for r in timed)
            else:  # rows from before the step windows were recorded: the whole run over its steps
                steps = [r["usage"]["tokens"] / r["steps"] for r in ok if r.get("steps")]
                s["tokens_per_step"] = statistics.fmean(steps) if steps else None
        else:
            s["wall_s"] = statistics.fmean(r["wall_s"] for r in mine) if mine else 0.0
            s["calls"] = statistics.fmean(r["usage"]["calls"] for r in mine) if mine else 0
            s["tokens"] = statistics.fmean(r["usage"]["tokens"] for r in mine) if mine else 0
        by[sys_name] = s
    return by


def paired_vs_skillgrad(rows: list[dict[str, Any]], name: str) -> str:
    """skillgrad's held-out score minus the system's, paired over (seed, test item), with its 95% bootstrap
    interval (engine/gate/intervals.py); 'n/a' without per-item scores of both."""
    from skillgrad.engine.gate.intervals import paired_by_id

    def items(system: str) -> dict[str, float]:
        return {f"{r['seed']}:{k}": v for r in rows if r["system"] == system and "per_item" in r
                for k, v in r["per_item"].items()}

    mine, sg = items(name), items("skillgrad")
    if not mine or not sg or not set(mine) & set(sg):
        return "n/a"
    p = paired_by_id(mine, sg)
    return f"{100 * p['mean_diff']:+.1f} [{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}] (n={p['n']})"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def render(task: str, rows: list[dict[str, Any]], n_test: int) -> str:
    by = summarize(rows)
    sg = by.get("skillgrad", {})
    seeds = max((s["runs"] for s in by.values()), default=0)
    lines = [f"### {task} (held-out n = {n_test}, {seeds} seed{'s' if seeds != 1 else ''})", "",
             "| system | held-out hard before -> after (95% interval over seeds) | gain (points) | wall s | "
             "provider calls | tokens | steps | tokens/step | tokens outside steps | skillgrad/x wall | "
             "skillgrad/x tokens | skillgrad/x tokens/step | skillgrad - x, paired [95%] | teacher calls | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in by.items():
        errs = f"{s['ok']}/{s['runs']} ran; {s['exceptions']} exceptions; {s['failed_calls']} failed calls"
        if s["errors"]:
            errs += "; " + s["errors"][0]
        if "after" in s:
            m, lo, hi = s["after"]
            g = s["gain"]
            if s["ok"] > 1:
                score = f"{_pct(s['before'])} -> {_pct(m)} [{_pct(lo)}, {_pct(hi)}]"
                gain = f"{100 * g[0]:+.1f} [{100 * g[1]:+.1f}, {100 * g[2]:+.1f}]"
            else:  # one seed has no interval
                score, gain = f"{_pct(s['before'])} -> {_pct(m)} (1 seed)", f"{100 * g[0]:+.1f}"
        else:
            score, gain = f"{_pct(s['before'])} -> error" if s.get("before") is not None else "error", "n/a"
        if name != "skillgrad" and "after" in s and "after" in sg and s["wall_s"] and s["tokens"]:
            rw, rt = f"{sg['wall_s'] / s['wall_s']:.2f}", f"{sg['tokens'] / s['tokens']:.2f}"
        else:
            rw = rt = "n/a" if name != "skillgrad" else "1"
        tps = f"{s['tokens_per_step']:.0f}" if s.get("tokens_per_step") else "no step done"
        rs = "1" if name == "skillgrad" else (f"{sg['tokens_per_step'] / s['tokens_per_step']:.2f}"
                                              if sg.get("tokens_per_step") and s.get("tokens_per_step") else "n/a")
        steps = f"{s['steps']:.1f}" if "steps" in s else "n/a"
        outside = f"{s['outside_steps']:.0f}" if "outside_steps" in s else "not recorded"
        paired = "—" if name == "skillgrad" else paired_vs_skillgrad(rows, name)
        teacher = statistics.fmean(r["usage"].get("teacher_calls", 0) for r in rows if r["system"] == name)
        lines.append(f"| {name} | {score} | {gain} | {s['wall_s']:.0f} | {s['calls']:.0f} | {s['tokens']:.0f} | {steps} | "
                     f"{tps} | {outside} | {rw} | {rt} | {rs} | {paired} | {teacher:.0f} | {errs} |")
    lines += ["", "skillgrad - x, paired: skillgrad's held-out hard minus the system's, in points, paired over "
              "(seed, test item) with a 95% bootstrap interval; teacher calls: the teacher prompts the system's "
              "run sent (mean over seeds).",
              "", "tokens/step: the tokens of the requests made inside the system's steps (skillgrad's step stages, "
              "SkillOpt's `[STEP k]` to its end, GEPA's iterations), over the steps begun; tokens outside steps: "
              "start-up evaluation and probes, epoch-end stages, wrap-up.",
              "", "Code each system ran: " + "; ".join(f"{n} {', '.join(s['versions'])}" for n, s in by.items())]
    return "\n".join(lines) + "\n"


def _items(rows: list[dict[str, Any]], system: str) -> dict[str, float]:
    return {f"{r['seed']}:{k}": v for r in rows if r["system"] == system and "per_item" in r
            for k, v in r["per_item"].items()}


def _paired(rows: list[dict[str, Any]], name: str, other: str) -> str:
    from skillgrad.engine.gate.intervals import paired_by_id

    a, b = _items(rows, other), _items(rows, name)
    if not set(a) & set(b):
        return "n/a"
    p = paired_by_id(a, b)
    return f"{100 * p['mean_diff']:+.1f} [{100 * p['ci_low']:+.1f}, {100 * p['ci_high']:+.1f}]"


def best_baseline(rows: list[dict[str, Any]]) -> str | None:
    """The system other than skillgrad and its ablations with the highest mean held-out score over its seeds."""
    means = {name: statistics.fmean(r["after"] for r in rows if r["system"] == name and "after" in r)
             for name in dict.fromkeys(r["system"] for r in rows if "after" in r)
             if not name.startswith("skillgrad")}
    return max(means, key=lambda n: means[n]) if means else None


def compact(rows: list[dict[str, Any]], *, teacher: bool = False) -> str:
    """The docs table of one task: held-out before -> after with its 95% bootstrap interval over (seed, item),
    the gain's mean and Student-t 95% interval over seeds, each system paired with skillgrad and skillgrad's
    ablations paired with the best other system, calls and tokens from the proxy, the code each row ran."""
    done = [r for r in rows if "after" in r]
    best = best_baseline(done)
    head = ["system", "seeds", "held-out before -> after [95%, items x seeds]", "gain, points [95%, seeds]",
            "skillgrad - x, paired [95%]", f"x - best baseline ({best}), paired [95%]", "calls", "tokens"]
    head += ["teacher calls", "teacher tokens"] if teacher else []
    lines = ["| " + " | ".join([*head, "code"]) + " |", "|" + "---|" * (len(head) + 1)]
    from skillgrad.engine.gate.intervals import mean_interval

    for name in dict.fromkeys(r["system"] for r in done):
        mine = [r for r in done if r["system"] == name]
        ci = mean_interval(list(_items(done, name).values()))
        g, lo, hi = interval([r["after"] - r["before"] for r in mine])
        gain = f"{100 * g:+.1f}" + (f" [{100 * lo:+.1f}, {100 * hi:+.1f}]" if len(mine) > 1 else "")
        cells = [name, str(len(mine)),
                 f"{100 * statistics.fmean(r['before'] for r in mine):.1f} -> "
                 f"{100 * statistics.fmean(r['after'] for r in mine):.1f} "
                 f"[{100 * ci['ci_low']:.1f}, {100 * ci['ci_high']:.1f}]", gain,
                 "—" if name == "skillgrad" else _paired(done, "skillgrad", name),
                 "—" if name == best else _paired(done, name, best) if best else "n/a",
                 f"{statistics.fmean(r['usage']['calls'] for r in mine):.0f}",
                 f"{statistics.fmean(r['usage']['tokens'] for r in mine):,.0f}"]
        if teacher:
            cells += [f"{statistics.fmean(r['usage'].get('teacher_calls', 0) for r in mine):.0f}",
                      f"{statistics.fmean(r['usage'].get('teacher_tokens', 0) for r in mine):,.0f}"]
        cells.append(", ".join(sorted({str(r.get("version", "not recorded")) for r in mine})))
        lines.append("| " + " | ".join(cells) + " |")
    failed = sorted({r["system"] for r in rows if "after" not in r})
    if failed:
        lines += ["", "No held-out result: " + ", ".join(failed) + " (see results.json)."]
    return "\n".join(lines) + "\n"
