"""OfficeQA's SkillOpt search modes: oracle pages and the controller-run custom search.

`oracle_pages` gives the student the gold page(s): the item's source files, narrowed to the pages its
`source_docs` name (`page 12`, `#page=12`, `p. 12`) when the file marks pages (form feeds or
`Page N` lines), else the file's start; capped at a character budget.

`custom_search` runs the student's queries against an HTTP search API (SkillOpt's `search_api_url`,
with a bearer token read from the variable named by `search_auth_env`): a POST of
{"query", "provider", "max_num_results"}; the reply is a JSON list of results or {"results": [...]}
with title / url / snippet (or content) fields, or plain text. A failed query becomes a message for
the student, never a crashed task.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from skillgrad.envs.officeqa.tools import DocTools, PathRefused

_PAGE_REF = re.compile(r"(?:#page=|\bpages?\s*|\bp\.\s*)(\d+)", re.IGNORECASE)
_PAGE_LINE = re.compile(r"^\s*[-=#*\s]*page\s+(\d+)\b", re.IGNORECASE | re.MULTILINE)
_SEARCH = re.compile(r"^\s*(?:[-*]\s*)?SEARCH\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_SEARCH_TAG = re.compile(r"<search_queries>(.*?)</search_queries>", re.IGNORECASE | re.DOTALL)


def _pages(text: str) -> dict[int, str]:
    """Page number -> text, from form feeds or `Page N` marker lines; {} when the file marks no pages."""
    if "\f" in text:
        return {n: page for n, page in enumerate(text.split("\f"), 1)}
    marks = list(_PAGE_LINE.finditer(text))
    if not marks:
        return {}
    out: dict[int, str] = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.setdefault(int(m.group(1)), text[m.start():end])
    return out


def oracle_pages(tools: DocTools, source_files: list[str], source_docs: Any, budget: int) -> str:
    """The gold page(s) of an item as one block (file headers, then page text), at most `budget` chars."""
    wanted = {int(n) for n in _PAGE_REF.findall(json.dumps(source_docs) if source_docs else "")}
    blocks: list[str] = []
    left = budget
    for name in source_files:
        try:
            real = tools.resolve(name)
        except (PathRefused, FileNotFoundError):
            continue
        text = real.read_text(encoding="utf-8", errors="replace")
        pages = _pages(text)
        chosen = [f"(page {n})\n{pages[n].strip()}" for n in sorted(wanted) if n in pages]
        body = "\n\n".join(chosen) if chosen else text
        block = f"### {name}\n{body.strip()}"[:left]
        blocks.append(block)
        left -= len(block)
        if left <= 0:
            break
    return "\n\n".join(blocks)


def parse_queries(reply: str, limit: int) -> list[str]:
    """`SEARCH: q1 | q2` lines or SkillOpt's `<search_queries>[...]</search_queries>`; deduplicated, capped."""
    found: list[str] = []
    tag = _SEARCH_TAG.search(reply or "")
    if tag:
        raw = tag.group(1).strip()
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = [ln.strip(" -*\"'") for ln in raw.splitlines()]
        found = [str(q).strip() for q in (parsed if isinstance(parsed, list) else [parsed])]
    for m in _SEARCH.finditer(reply or ""):
        found += [q.strip() for q in m.group(1).split("|")]
    out: list[str] = []
    for q in found:
        if q and q not in out:
            out.append(q)
    return out[:limit]


def _format_results(query: str, payload: Any, limit: int) -> str:
    results = payload.get("results", payload.get("data", [])) if isinstance(payload, dict) else payload
    if not isinstance(results, list):
        return f"Query: {query}\n{json.dumps(payload, ensure_ascii=False)[:2000]}"
    lines = [f"Query: {query}"]
    for n, r in enumerate(results[:limit], 1):
        if isinstance(r, dict):
            title = r.get("title") or r.get("name") or ""
            snippet = r.get("snippet") or r.get("content") or r.get("text") or ""
            lines.append(f"{n}. {title} {r.get('url') or ''}\n   {str(snippet)[:800]}")
        else:
            lines.append(f"{n}. {str(r)[:800]}")
    if len(lines) == 1:
        lines.append("(no results)")
    return "\n".join(lines)


async def custom_search(queries: list[str], *, url: str, token: str, provider: str, max_results: int,
                        timeout_s: float) -> str:
    """Run each query against the search API; errors are reported inline for the student."""
    blocks = []
    async with httpx.AsyncClient(timeout=timeout_s) as client:
        for n, query in enumerate(queries, 1):
            try:
                resp = await client.post(url, json={"query": query, "provider": provider,
                                                    "max_num_results": max_results},
                                         headers={"Authorization": f"Bearer {token}"})
                resp.raise_for_status()
                try:
                    text = _format_results(query, resp.json(), max_results)
                except ValueError:
                    text = f"Query: {query}\n{resp.text[:4000]}"
            except httpx.HTTPError as e:
                text = f"Query: {query}\n[search error: {type(e).__name__}: {e}]"
            blocks.append(f"## Result {n}\n{text}")
    return "\n\n".join(blocks)
