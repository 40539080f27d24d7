"""Teacher-schema grammars: size and llama.cpp parse time, llama-cpp-python's converter vs ours.

    .venv/bin/python benchmarks/grammar_compile.py

For each schema the engine sends with the default limits (max_edit_chars 600: slow update and meta skill
1,800 characters, rewritten documents 12,000), the GBNF size and the best of 5 parses by llama.cpp into a
sampler (what happens before the first token). "refused" means llama.cpp returned no sampler: with
llama-cpp-python's converter that call then dies with SIGSEGV.
"""

from __future__ import annotations

import json
import time

import llama_cpp
from llama_cpp import Llama
from llama_cpp.llama_grammar import json_schema_to_gbnf

from skillgrad.engine import schemas
from skillgrad.models.grammar import schema_to_gbnf
from skillgrad.models.providers.local import bundled_gguf


def parse_ms(vocab: object, gbnf: str) -> float | None:
    best: float | None = None
    for _ in range(5):
        t = time.perf_counter()
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode(), b"root")
        dt = (time.perf_counter() - t) * 1000
        if not sampler:
            return None
        llama_cpp.llama_sampler_free(sampler)
        best = dt if best is None else min(best, dt)
    return best


def main() -> None:
    path = bundled_gguf()
    assert path is not None, "the bundled SmolLM2 model is not installed"
    vocab = Llama(model_path=str(path), n_ctx=256, n_threads=1, verbose=False)._model.vocab
    chars = 600
    cases = {
        "analyst (patch)": schemas.analyst_model(4, chars, appendix=True),
        "merge (patch)": schemas.merge_model(8, chars),
        "suggestions": schemas.suggestions_model(8),
        "skill document": schemas.skill_document_model(chars * 20),
        "ranking": schemas.Ranking,
        "learning rate": schemas.LearningRateDecision,
        "slow update": schemas.slow_update_model(chars * 3),
        "meta skill": schemas.meta_skill_model(chars * 3),
    }
    print(f"{'schema':18} {'old GBNF chars':>14} {'old parse ms':>12} {'new GBNF chars':>14} {'new parse ms':>12}")
    for name, model in cases.items():
        old = json_schema_to_gbnf(json.dumps(model.model_json_schema()))
        new = schema_to_gbnf(model.model_json_schema()).gbnf
        cells = []
        for gbnf in (old, new):
            ms = parse_ms(vocab, gbnf)
            cells += [f"{len(gbnf):14d}", f"{ms:12.2f}" if ms is not None else f"{'refused':>12}"]
        print(f"{name:18} {' '.join(cells)}", flush=True)


if __name__ == "__main__":
    main()
