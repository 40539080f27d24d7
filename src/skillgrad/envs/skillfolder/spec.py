"""The Agent Skills formats, parsed and checked without I/O: SKILL.md frontmatter, `evals/evals.json`,
`eval_queries.json`, and trigger precision / recall / F1.

Frontmatter rules are the Agent Skills specification's (agentskills.io/specification): `name` 1-64 lower-case
letters, digits and hyphens, no leading, trailing or doubled hyphen, equal to the folder's name; `description`
1-1,024 characters; optional `license`, `compatibility` (1-500 characters), `metadata` (string to string),
`allowed-tools` (a space-separated string or a list of strings). Every problem is one line naming the field and
the fix, so a user sees all of them at once.

evals.json is read in the forms skill authors commit: the spec's `{skill_name, evals: [...]}` and a bare list of
evals; an eval's checks are `assertions` or `expectations` (both names are in use), each a sentence or an object
with a `text`. An assertion that is a plain rule (`contains 'x'`, `contains 'x' or contains 'y'`, `does not contain
'x'`, `matches /re/`) becomes a local check; any other sentence is graded by the judge model with evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from skillgrad.envs.tasks.checks import Check

NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
KNOWN_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass
class Frontmatter:
    meta: dict[str, Any]
    body: str  # the Markdown after the closing `---`
    head: str  # the frontmatter block as written, `---` lines included: kept byte for byte on write-back


def split_frontmatter(text: str) -> Frontmatter | str:
    """The frontmatter and body of a SKILL.md, or one line saying why it has none that parses."""
    m = _FRONT.match(text.lstrip("\ufeff"))
    if not m:
        return "SKILL.md: no YAML frontmatter; start the file with a '---' line, name: and description:, then '---'"
    try:
        meta = yaml.safe_load(m.group(1))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        return f"SKILL.md: the frontmatter is not valid YAML{where}; quote values that hold ': ' or '#'"
    if not isinstance(meta, dict):
        return "SKILL.md: the frontmatter must be a mapping of keys (name:, description:, ...)"
    text = text.lstrip("\ufeff")
    return Frontmatter(meta={str(k): v for k, v in meta.items()}, body=text[m.end():], head=text[:m.end()])


def frontmatter_problems(meta: dict[str, Any], folder: str) -> list[str]:
    """Every way `meta` breaks the specification, one line each (empty when it is valid)."""
    out: list[str] = []
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        out.append("SKILL.md name: missing; add `name: <folder name>` (lower-case letters, digits, hyphens)")
    else:
        if len(name) > NAME_MAX:
            out.append(f"SKILL.md name: {len(name)} characters; shorten it to at most {NAME_MAX}")
        if not _NAME.match(name):
            out.append(f"SKILL.md name: {name!r} must be lower-case letters, digits and single hyphens, "
                       "not starting or ending with a hyphen")
        if folder and name != folder:
            out.append(f"SKILL.md name: {name!r} does not match the folder name {folder!r}; rename one of them")
    desc = meta.get("description")
    if not isinstance(desc, str) or not desc.strip():
        out.append("SKILL.md description: missing or empty; say what the skill does and when to use it")
    elif len(desc) > DESCRIPTION_MAX:
        out.append(f"SKILL.md description: {len(desc)} characters; shorten it to at most {DESCRIPTION_MAX}")
    lic = meta.get("license")
    if lic is not None and not isinstance(lic, str):
        out.append("SKILL.md license: must be a string (a license name or a bundled file's name)")
    comp = meta.get("compatibility")
    if comp is not None and (not isinstance(comp, str) or not 1 <= len(comp) <= COMPATIBILITY_MAX):
        out.append(f"SKILL.md compatibility: must be a string of 1-{COMPATIBILITY_MAX} characters")
    md = meta.get("metadata")
    if md is not None and (not isinstance(md, dict)
                           or not all(isinstance(k, str) and isinstance(v, str) for k, v in md.items())):
        out.append("SKILL.md metadata: must map string keys to string values (quote numbers: version: \"1.0\")")
    tools = meta.get("allowed-tools")
    if tools is not None and not (isinstance(tools, str)
                                  or (isinstance(tools, list) and all(isinstance(t, str) for t in tools))):
        out.append("SKILL.md allowed-tools: must be a space-separated string or a list of strings")
    for key in meta:
        if key not in KNOWN_KEYS:
            out.append(f"SKILL.md {key}: not a frontmatter key of the specification; move it under metadata: "
                       f"(allowed: {', '.join(KNOWN_KEYS)})")
    return out


# ------------------------------------------------------------------ evals.json
@dataclass
class Assertion:
    text: str
    check: Check | None = None  # a plain rule, scored locally; None = graded by the judge in words


@dataclass
class EvalCase:
    id: str
    prompt: str
    expected_output: str = ""
    files: list[str] = field(default_factory=list)
    assertions: list[Assertion] = field(default_factory=list)
    name: str = ""  # the workspace folder's name: eval-<name>

    @property
    def dir_name(self) -> str:
        return f"eval-{self.name}"


_QUOTED = r"""(?:'([^']*)'|"([^"]*)")"""
_CONTAINS = re.compile(rf"^\s*(?:output\s+|reply\s+|response\s+)?contains\s+{_QUOTED}\s*$", re.IGNORECASE)
_NOT_CONTAINS = re.compile(rf"^\s*(?:output\s+|reply\s+|response\s+)?(?:does\s+not|doesn't)\s+contain\s+{_QUOTED}"
                           r"\s*$", re.IGNORECASE)
_MATCHES = re.compile(r"^\s*(?:output\s+|reply\s+|response\s+)?matches\s+/(.+)/\s*$", re.IGNORECASE)


def _quoted(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


def assertion_check(text: str) -> Check | None:
    """The local check a plain-rule assertion stands for, or None when it is a sentence for the judge."""
    m = _NOT_CONTAINS.match(text)
    if m and _quoted(m):
        return Check(op="not_contains", arg=_quoted(m))
    m = _MATCHES.match(text)
    if m:
        try:
            return Check(op="regex", arg=m.group(1))
        except ValueError:
            return None
    parts = re.split(r"\s+or\s+(?=(?:output\s+|reply\s+|response\s+)?contains\b)", text, flags=re.IGNORECASE)
    needles = []
    for part in parts:
        m = _CONTAINS.match(part)
        if not m or not _quoted(m):
            return None
        needles.append(_quoted(m))
    if len(needles) == 1:
        return Check(op="contains", arg=needles[0])
    return Check(op="regex", arg="|".join(re.escape(n) for n in needles))


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:48].strip("-") or "case"


def _assertions(raw: Any, where: str) -> list[Assertion]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"{where}: assertions must be a list of sentences")
    out = []
    for j, a in enumerate(raw):
        text = a.get("text") or a.get("assertion") or a.get("name") if isinstance(a, dict) else a
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}.assertions[{j}]: give a sentence (or an object with a text)")
        out.append(Assertion(text=text.strip(), check=assertion_check(text)))
    return out


def parse_evals(data: Any) -> tuple[str, list[EvalCase]]:
    """(skill_name, cases) from evals.json's parsed JSON; ValueError with one line naming the field."""
    if isinstance(data, dict):
        skill_name = data.get("skill_name", "")
        raw = data.get("evals")
        if not isinstance(raw, list):
            raise ValueError("evals: missing or not a list; write {\"skill_name\": ..., \"evals\": [...]}")
    elif isinstance(data, list):
        skill_name, raw = "", data
    else:
        raise ValueError("the file must hold {\"skill_name\": ..., \"evals\": [...]} or a list of evals")
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for i, e in enumerate(raw):
        where = f"evals[{i}]"
        if not isinstance(e, dict):
            raise ValueError(f"{where}: must be an object with id, prompt, expected_output, files, assertions")
        prompt = e.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"{where}.prompt: missing or empty; give the user's request")
        eid = str(e.get("id", i + 1))
        if eid in seen:
            raise ValueError(f"{where}.id: {eid!r} appears twice; eval ids must be unique")
        seen.add(eid)
        files = e.get("files") or []
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise ValueError(f"{where}.files: must be a list of paths (relative to the skill folder or to evals/)")
        expected = e.get("expected_output") or ""
        if not isinstance(expected, str):
            raise ValueError(f"{where}.expected_output: must be a string")
        raw_assertions = e.get("assertions") if "assertions" in e else e.get("expectations")
        name = e.get("name") or e.get("eval_name")
        cases.append(EvalCase(id=eid, prompt=prompt.strip(), expected_output=expected.strip(), files=list(files),
                              assertions=_assertions(raw_assertions, where),
                              name=_slug(name if isinstance(name, str) and name else
                                         eid if not eid.isdigit() else f"{eid}-{prompt}")))
    if not cases:
        raise ValueError("evals: the list is empty; add at least one eval")
    names = [c.name for c in cases]
    for c in cases:  # two prompts that slug alike keep apart by id
        if names.count(c.name) > 1:
            c.name = _slug(f"{c.id}-{c.name}")
    return str(skill_name or ""), cases


# ------------------------------------------------------------------ eval_queries.json and trigger scores
@dataclass
class TriggerQuery:
    query: str
    should_trigger: bool
    split: str = ""  # "train" or "validation" when the file fixes it


def parse_queries(data: Any) -> list[TriggerQuery]:
    """`[{query, should_trigger}]` (also `{"evals": [{prompt|query, should_trigger}]}`)."""
    raw = data.get("evals") or data.get("queries") if isinstance(data, dict) else data
    if not isinstance(raw, list) or not raw:
        raise ValueError("must be a non-empty list of {\"query\": ..., \"should_trigger\": true|false}")
    out = []
    for i, q in enumerate(raw):
        if not isinstance(q, dict):
            raise ValueError(f"[{i}]: must be an object with query and should_trigger")
        text = q.get("query") or q.get("prompt")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"[{i}].query: missing or empty")
        if not isinstance(q.get("should_trigger"), bool):
            raise ValueError(f"[{i}].should_trigger: must be true or false")
        split = q.get("split", "")
        if split not in ("", "train", "validation", "val", "test"):
            raise ValueError(f"[{i}].split: {split!r}; use train or validation")
        out.append(TriggerQuery(text.strip(), q["should_trigger"], "train" if split == "train" else
                                "validation" if split else ""))
    return out


@dataclass
class TriggerScore:
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    tn: int


def trigger_score(pairs: list[tuple[bool, bool]]) -> TriggerScore:
    """Precision, recall and F1 of `(should_trigger, triggered)` pairs. With no positive query and no false
    trigger, precision and recall are 1 (nothing was missed and nothing fired wrongly)."""
    tp = sum(1 for s, t in pairs if s and t)
    fp = sum(1 for s, t in pairs if t and not s)
    fn = sum(1 for s, t in pairs if s and not t)
    tn = len(pairs) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else (1.0 if not fn else 0.0)
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return TriggerScore(round(precision, 4), round(recall, 4), round(f1, 4), tp, fp, fn, tn)
