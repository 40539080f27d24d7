"""Prompt templates: package data, overridable per environment and by the user.

A template file `<name>.md` holds a system part and a user part:

    <!-- system -->
    ...
    <!-- user -->
    ... {{skill}} ...

Placeholders are `{{name}}`; JSON braces in templates stay literal. Lookup order: the user's
`prompts.dir`, then (with `prompts.use_env_prompts`) the environment's family prompts in `<dir>/family/`,
then the environment's prompt dirs, then the packaged defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from skillgrad.errors import ConfigError

_PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
_SPLIT = re.compile(r"^<!--\s*(system|user)\s*-->\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Template:
    name: str
    system: str
    user: str
    source: str

    def render(self, **values: object) -> tuple[str, str]:
        return _fill(self.system, values, self), _fill(self.user, values, self)


def _fill(text: str, values: dict[str, object], tpl: Template) -> str:
    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in values:
            raise KeyError(f"prompt {tpl.name} ({tpl.source}) uses {{{{{key}}}}} which the stage does not provide")
        return str(values[key])

    return _PLACEHOLDER.sub(sub, text).strip() + "\n"


def parse_template(name: str, text: str, source: str) -> Template:
    parts = _SPLIT.split(text)
    sections: dict[str, str] = {}
    for i in range(1, len(parts) - 1, 2):
        sections[parts[i]] = parts[i + 1]
    if "user" not in sections:
        raise ConfigError(f"prompt template {source} has no '<!-- user -->' section; add one")
    return Template(name, sections.get("system", "").strip(), sections["user"].strip(), source)


def search_dirs(user_dir: str, env_dirs: list[Path], *, use_env_prompts: bool) -> list[Path]:
    """Where templates are looked up, first match wins. Family prompts dictate the edit for one task family
    (e.g. "write the failed question as a fact sentence"); off by default, the generic mechanism does it."""
    family = [Path(d) / "family" for d in env_dirs] if use_env_prompts else []
    return ([Path(user_dir)] if user_dir else []) + family + [Path(d) for d in env_dirs]


class PromptLibrary:
    def __init__(self, search_dirs: list[Path] | None = None) -> None:
        self.search_dirs = [Path(d) for d in (search_dirs or []) if d]
        self._cache: dict[str, Template] = {}

    def get(self, name: str) -> Template:
        if name in self._cache:
            return self._cache[name]
        for d in self.search_dirs:
            f = d / f"{name}.md"
            if f.is_file():
                tpl = parse_template(name, f.read_text(encoding="utf-8"), str(f))
                break
        else:
            pkg = resources.files("skillgrad.prompts").joinpath(f"{name}.md")
            if not pkg.is_file():
                raise ConfigError(f"no prompt template named {name!r}; expected {name}.md in skillgrad/prompts")
            tpl = parse_template(name, pkg.read_text(encoding="utf-8"), f"skillgrad/prompts/{name}.md")
        self._cache[name] = tpl
        return tpl

    def sources(self) -> dict[str, str]:
        return {k: v.source for k, v in self._cache.items()}


def template_texts(library: PromptLibrary) -> list[str]:
    """The fixed text of every template the library resolves (placeholders blanked): what the teacher was shown
    by the prompt itself, not by the run; engine/goodhart.py refuses an edit that copies it into the skill."""
    names = {f.stem for d in library.search_dirs if d.is_dir() for f in d.glob("*.md")}
    names |= {f.name[:-3] for f in resources.files("skillgrad.prompts").iterdir() if f.name.endswith(".md")}
    out: list[str] = []
    for name in sorted(names - {"README"}):
        try:
            tpl = library.get(name)
        except ConfigError:
            continue  # a README or a fragment that is not a template
        out.append(_PLACEHOLDER.sub(" ", f"{tpl.system}\n{tpl.user}"))
    return out
