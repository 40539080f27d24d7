"""The score ceiling (`train.stop_at_ceiling`): the best skill scores full marks on every selection item, so the
strict gate can accept no better one and the remaining steps could only spend calls. Never the test split."""

from __future__ import annotations

from skillgrad.config.schema import Config
from skillgrad.engine.state import RunState
from skillgrad.skill import skill_hash


def ceiling_reason(cfg: Config, st: RunState) -> str:
    """Why the run is at its ceiling ('' when it is not). With `train.tiebreak` a tie is decided on training tasks,
    so the best skill (or the current one, which a slow update may have put in its place) must also pass every one
    it was last run on."""
    ev = cfg.evaluation
    if not cfg.train.stop_at_ceiling or ev.use_semantic_density or st.best_score < 1.0 - 1e-9:
        return ""
    if cfg.train.tiebreak and max(st.train_hard.get(skill_hash(x), 0.0)
                                  for x in (st.best_skill, st.current_skill)) < 1.0 - 1e-9:
        return ""
    return ("the best skill scores 1.0 on every selection item"
            + (" and passes every training task it was last run on" if cfg.train.tiebreak else "")
            + "; no candidate can pass the strict gate")
