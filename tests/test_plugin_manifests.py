"""The shipped plugin layouts: the Codex plugin's `.codex-plugin/plugin.json` (name kebab-case, semantic version,
component paths `./`-relative and inside the plugin, only the manifest in `.codex-plugin/`, interface fields of
the documented kinds) and the skills both plugins ship, checked by the Agent Skills specification's frontmatter
rules (envs/skillfolder/spec.py). The Claude Code manifests are checked in tests/test_agent_plugins.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillgrad.envs.skillfolder.folder import read_skill_folder
from skillgrad.integrations import codex

ROOT = Path(__file__).resolve().parents[1]
CODEX = ROOT / "plugins" / "codex"
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
PATH_KEYS = ("skills", "hooks", "mcpServers", "apps")
INTERFACE_STR = ("displayName", "shortDescription", "longDescription", "developerName", "category", "websiteURL",
                 "privacyPolicyURL", "termsOfServiceURL", "brandColor", "composerIcon", "logo")


def codex_manifest_problems(plugin: Path) -> list[str]:
    """What is wrong with a Codex plugin's manifest, one line each (empty when it is valid)."""
    out = []
    m = json.loads((plugin / ".codex-plugin" / "plugin.json").read_text(encoding="utf-8"))
    if not isinstance(m.get("name"), str) or not KEBAB.match(m["name"]):
        out.append("name: required, kebab-case")
    if "version" in m and not (isinstance(m["version"], str) and SEMVER.match(m["version"])):
        out.append("version: a semantic version")
    for key in PATH_KEYS:
        v = m.get(key)
        if isinstance(v, str):
            if not v.startswith("./"):
                out.append(f"{key}: {v} must start with ./")
            elif not (plugin / v).resolve().is_relative_to(plugin.resolve()) or not (plugin / v).exists():
                out.append(f"{key}: {v} is not inside the plugin")
    iface = m.get("interface", {})
    if not isinstance(iface, dict):
        out.append("interface: an object")
    else:
        out += [f"interface.{k}: a string" for k in INTERFACE_STR if k in iface and not isinstance(iface[k], str)]
        prompts = iface.get("defaultPrompt", [])
        if not isinstance(prompts, list) or len(prompts) > 3 or any(len(str(p)) > 128 for p in prompts):
            out.append("interface.defaultPrompt: at most 3 prompts of at most 128 characters")
    extra = sorted(p.name for p in (plugin / ".codex-plugin").iterdir() if p.name != "plugin.json")
    if extra:
        out.append(f".codex-plugin/ holds {', '.join(extra)}; only plugin.json belongs there")
    return out


def test_codex_plugin_manifest_is_valid() -> None:
    assert codex_manifest_problems(CODEX) == []
    m = json.loads((CODEX / ".codex-plugin" / "plugin.json").read_text(encoding="utf-8"))
    claude = json.loads((ROOT / "plugins/claude-code/.claude-plugin/plugin.json").read_text(encoding="utf-8"))
    assert (m["name"], m["version"]) == (claude["name"], claude["version"])  # one plugin, two hosts


@pytest.mark.parametrize("change, problem", [
    ({"name": "Skillgrad Sleep"}, "name: required"), ({"version": "1"}, "version:"),
    ({"skills": "skills/"}, "must start with ./"), ({"skills": "./../x/"}, "not inside the plugin"),
    ({"interface": {"defaultPrompt": ["a"] * 4}}, "defaultPrompt")])
def test_the_codex_check_rejects(tmp_path: Path, change: dict[str, object], problem: str) -> None:
    plugin = tmp_path / "p"
    (plugin / ".codex-plugin").mkdir(parents=True)
    (plugin / "skills").mkdir()
    m = json.loads((CODEX / ".codex-plugin" / "plugin.json").read_text(encoding="utf-8"))
    (plugin / ".codex-plugin" / "plugin.json").write_text(json.dumps({**m, **change}), encoding="utf-8")
    assert any(problem in line for line in codex_manifest_problems(plugin))


def test_shipped_skills_follow_the_specification() -> None:
    shipped = CODEX / "skills" / "skillgrad-sleep"
    assert (shipped / "SKILL.md").read_text(encoding="utf-8") == codex.skill_text()  # the installer's skill
    for skill in (shipped, ROOT / "plugins/claude-code/skills/skillgrad-sleep"):
        assert read_skill_folder(skill, need_evals=False).name == "skillgrad-sleep"  # raises on any problem
