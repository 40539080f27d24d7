"""The gate: every rule that lets a skill become the current or the best skill, in one package.

engine/candidate.py (`judge_candidate`) is the one path every candidate takes (a step, edit credit, a slow update,
appendix notes, meta reflect, the run-end promotion); it applies these pieces in this order:

- `paired`: the gate score (`evaluation.gate_metric`) and the per-item test (`gate_test`: strict,
  paired_bootstrap or mcnemar; `gate_min_delta`; `gate_no_regression`), on the same items in the same order;
- `rule`: that test on the selection split against an incumbent, with the incumbent re-evaluation;
- `early`: scoring stops once the items scored cap the candidate where the strict comparison rejects it;
- `tiebreak`: a tie on validation, decided on the step's training tasks, only for a tie that already passes
  every other test (`rule.statistical_test(..., tie=True)`): the tie-break replaces the strict `>`, nothing else;
- `stats`, `intervals`: the statistics behind the tests and the run-end intervals.

A candidate accepted against the current skill becomes the best skill only if it also passes the same tests
against the best skill (when the current skill is the best, that is the test it passed). A forced update (a slow
update, appendix notes) becomes current without a comparison and never becomes best, so it never lowers the bar a
later candidate must clear to become best. docs/gains.md says the same for users.
"""

from skillgrad.engine.gate.paired import GateTest, gate_score, gate_test

__all__ = ["GateTest", "gate_score", "gate_test"]
