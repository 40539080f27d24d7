"""When a skill triggers: a router model sees the skill's name and description among other skills and picks the
one to use for a request (or none), the way an agent reads its `available_skills` list.

The other skills are the skill's siblings in the same folder of skills; a folder alone gets a fixed list of
distractors. Each query runs `samples` times (different sample indices, the given temperature); the skill
triggered on a query when it was picked in at least half of them (the evaluation guide's 0.5 trigger-rate
threshold). The score is trigger F1 with precision and recall (spec.trigger_score).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, create_model

from skillgrad.envs.skillfolder.spec import TriggerQuery, TriggerScore, split_frontmatter, trigger_score
from skillgrad.errors import BudgetExceeded, ProviderFatal
from skillgrad.models.base import LLM

# Skills an agent commonly has beside a user's own: what a description must be told apart from when the
# skill's folder holds no siblings.
DISTRACTORS: tuple[tuple[str, str], ...] = (
    ("python-coding", "Write, fix and explain Python code: functions, scripts, tests and tracebacks."),
    ("web-search", "Look up current facts on the web: news, weather, prices, opening hours."),
    ("deploy-service", "Build, release and deploy applications to staging or production, and roll back."),
    ("frontend-debugging", "Debug React and CSS problems in web front ends: rendering, state, layout."),
)
ROUTER_SYSTEM = ("You route a user's request to at most one skill. Pick the skill whose description says it "
                 "handles this kind of request; pick \"none\" when no description fits.")
TRIGGER_AT = 0.5


def sibling_skills(root: Path) -> list[tuple[str, str]]:
    """(name, description) of the other skill folders beside `root` (same parent) whose SKILL.md parses."""
    out = []
    parent = root.resolve().parent
    for d in sorted(parent.iterdir()) if parent.is_dir() else []:
        if d.resolve() == root.resolve() or not (d / "SKILL.md").is_file():
            continue
        try:
            fm = split_frontmatter((d / "SKILL.md").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if not isinstance(fm, str) and isinstance(fm.meta.get("description"), str):
            out.append((str(fm.meta.get("name") or d.name), fm.meta["description"]))
    return out


def competitors(root: Path) -> list[tuple[str, str]]:
    """The skills the description competes with: its siblings, else the fixed distractors."""
    return sibling_skills(root) or list(DISTRACTORS)


def _order(skills: list[tuple[str, str]], query: str) -> list[tuple[str, str]]:
    """A fixed shuffle per query, so the skill is not always first (small routers favour a position)."""
    return sorted(skills, key=lambda s: hashlib.sha256(f"{query}\0{s[0]}".encode()).hexdigest())


def _choice_schema(names: list[str]) -> type[BaseModel]:
    choice: Any = Literal[tuple([*names, "none"])]  # type: ignore[valid-type]
    return create_model("RouterChoice", skill=(choice, ...))


async def route(router: LLM, skills: list[tuple[str, str]], query: str, *, sample: int = 0,
                temperature: float = 0.0) -> str:
    """The skill name the router picks for `query`, or "none" (also when its reply is unusable)."""
    ordered = _order(skills, query)
    listing = "\n".join(f"- {n}: {d}" for n, d in ordered)
    messages = [{"role": "system", "content": ROUTER_SYSTEM},
                {"role": "user", "content": f"Available skills:\n{listing}\n\nRequest: {query}\n"
                                            'Reply with JSON {"skill": "<name or none>"}.'}]
    try:
        c = await router.complete(messages, schema=_choice_schema([n for n, _ in ordered]), max_tokens=24,
                                  temperature=temperature, stage="router", sample=sample)
    except (ProviderFatal, BudgetExceeded):
        raise
    except Exception:  # noqa: BLE001 - an unusable routing is "no skill"
        return "none"
    picked = getattr(c.parsed, "skill", None)
    return picked if isinstance(picked, str) else "none"


@dataclass
class QueryResult:
    query: str
    should_trigger: bool
    triggers: int
    runs: int

    @property
    def trigger_rate(self) -> float:
        return self.triggers / self.runs if self.runs else 0.0

    @property
    def triggered(self) -> bool:
        return self.trigger_rate >= TRIGGER_AT

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "trigger_rate": round(self.trigger_rate, 4), "triggered": self.triggered}


@dataclass
class TriggerEval:
    score: TriggerScore
    rows: list[QueryResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self.score), "queries": [r.to_json() for r in self.rows]}


async def trigger_eval(router: LLM, name: str, description: str, others: list[tuple[str, str]],
                       queries: list[TriggerQuery], *, samples: int = 3, temperature: float = 0.7) -> TriggerEval:
    """Trigger precision, recall and F1 of `description` on `queries` (each run `samples` times)."""
    skills = [(name, description), *[(n, d) for n, d in others if n != name]]
    rows = []
    for q in queries:
        picks = [await route(router, skills, q.query, sample=s, temperature=temperature) for s in range(samples)]
        rows.append(QueryResult(q.query, q.should_trigger, sum(p == name for p in picks), samples))
    return TriggerEval(trigger_score([(r.should_trigger, r.triggered) for r in rows]), rows)


def split_queries(queries: list[TriggerQuery], seed: int = 42, train_share: float = 0.6,
                  ) -> tuple[list[TriggerQuery], list[TriggerQuery]]:
    """(train, validation): a query's own `split` when the file gives one, else the guide's 60/40 with positives
    and negatives split separately so both keep the mix, fixed by a hash of (seed, query)."""
    train = [q for q in queries if q.split == "train"]
    val = [q for q in queries if q.split == "validation"]
    for flag in (True, False):
        group = sorted((q for q in queries if q.should_trigger is flag and not q.split),
                       key=lambda q: hashlib.sha256(f"{seed}:{q.query}".encode()).hexdigest())
        k = round(len(group) * train_share)
        train += group[:k]
        val += group[k:]
    return train, val
