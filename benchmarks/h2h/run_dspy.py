"""DSPy's side: LabeledFewShot, BootstrapFewShot or MIPROv2 on the task's training split, in the peers venv.

    benchmarks/.venv-peers/bin/python benchmarks/h2h/run_dspy.py SPEC.json     (written by head_to_head.py)

The program is one `dspy.Predict("question -> answer")` whose instructions are the initial skill. LabeledFewShot
takes k training tasks with a gold reply (DSPy's default k=16; zero model calls). BootstrapFewShot runs the
teacher program (the same program on the teacher model, `teacher_settings`) over the training tasks and keeps
the traces the task's own scorer passes (the metric asks head_to_head's scoring endpoint, so DSPy is judged by
the same checks as every system), then fills up with labeled demos, as DSPy does by default. MIPROv2 bootstraps
demo sets the same way, its grounded proposer (data-, program- and tip-aware, its defaults) asks the teacher model
for instruction candidates, and its Optuna search scores instruction x demo set on validation tasks with the
student; its sizes come from the call budget (h2h/fewshot.py `mipro_plan`), since its `auto="light"` preset
(6 candidates, about 10 full validation passes) alone asks for hundreds of calls. Both models are
reached through the proxy under this run's tag, so its calls and tokens are counted like every system's. The
compiled demos come back as (question, answer) pairs (and MIPROv2's chosen instruction, which replaces the skill's
text); head_to_head writes them into the skill as worked examples, the form the common harness sends as chat turns. No skillgrad import here: this runs in DSPy's venv.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any


def lm(dspy: Any, side: dict[str, Any], key_env: str) -> Any:
    return dspy.LM(f"openai/{side['model']}", api_base=side["base"], api_key=os.environ.get(key_env, "no-key"),
                   temperature=0.0, max_tokens=int(side["max_tokens"]), cache=False, num_retries=0)


def main(spec_path: Path) -> None:
    import dspy
    from dspy.teleprompt import BootstrapFewShot, LabeledFewShot, MIPROv2

    spec = json.loads(spec_path.read_text())
    out = Path(spec["out"])
    t0, errors = time.monotonic(), []
    student = lm(dspy, spec["student"], spec["api_key_env"])
    dspy.configure(lm=student)
    program = dspy.Predict(dspy.Signature("question -> answer", spec["instructions"] or "Answer the question."))
    rows = spec["train"]
    labeled = [dspy.Example(question=r["question"], answer=r["answer"], item_id=r["id"]).with_inputs("question")
               for r in rows if r.get("answer")]

    def metric(example: Any, pred: Any, trace: Any = None) -> bool:
        body = json.dumps({"item_id": example.item_id, "reply": str(getattr(pred, "answer", "") or "")}).encode()
        req = urllib.request.Request(spec["score_url"], data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=600) as r:
            return float(json.loads(r.read())["score"]) >= 1.0 - 1e-9

    def examples(items: list[dict[str, Any]]) -> list[Any]:
        return [dspy.Example(question=r["question"], answer=r.get("answer") or "", item_id=r["id"])
                .with_inputs("question") for r in items]

    instructions = None
    if spec["optimizer"] == "labeled":
        compiled = LabeledFewShot(k=int(spec["k"])).compile(program, trainset=labeled)
    elif spec["optimizer"] == "mipro":
        plan, teacher = spec["mipro"], lm(dspy, spec["teacher"], spec["api_key_env"])
        # labeled demos need a gold; the bootstrap pool takes the first tasks of the seed's order
        pool = examples(rows[: int(plan["pool"])])
        opt = MIPROv2(metric=metric, prompt_model=teacher, task_model=student, teacher_settings={"lm": teacher},
                      max_bootstrapped_demos=int(plan["max_bootstrapped"]), max_labeled_demos=int(plan["max_labeled"]),
                      auto=None, num_candidates=int(plan["num_candidates"]), num_threads=1,
                      max_errors=10**6, seed=int(spec.get("seed", 0)) + 9)  # a refused call scores 0, not a crash
        try:
            compiled = opt.compile(program, trainset=pool, valset=examples(spec["val"][: int(plan["val"])]),
                                   num_trials=int(plan["num_trials"]), minibatch=False)
            instructions = str(compiled.signature.instructions)
        except Exception as e:  # counted: the row says why
            errors.append(f"MIPROv2: {type(e).__name__}: {str(e)[:300]}")
            compiled = program
    else:
        # every training task is tried at most once (max_rounds=1); the call budget caps how many are tried
        pool = examples(rows)[: max(1, int(spec["budget_calls"]))]
        teacher = lm(dspy, spec["teacher"], spec["api_key_env"])
        opt = BootstrapFewShot(metric=metric, teacher_settings={"lm": teacher},
                               max_bootstrapped_demos=int(spec["max_bootstrapped"]), max_labeled_demos=int(spec["k"]),
                               max_rounds=1, max_errors=len(pool) + 1)
        try:
            compiled = opt.compile(program, trainset=pool)
        except Exception as e:  # counted: the row says why no demos came back
            errors.append(f"BootstrapFewShot: {type(e).__name__}: {str(e)[:300]}")
            compiled = program
    demos = []
    for d in getattr(compiled, "demos", []) or []:
        answer = str(d.get("answer", "") or "").strip()
        if answer:  # a demo without an answer (an unlabeled raw example) shows the student nothing to copy
            demos.append({"question": str(d.get("question", "")), "answer": answer,
                          "source": "bootstrapped" if d.get("augmented") else "labeled"})
    (out / "result.json").write_text(json.dumps({"demos": demos, "errors": errors, "instructions": instructions,
                                                 "wall_s": time.monotonic() - t0}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
