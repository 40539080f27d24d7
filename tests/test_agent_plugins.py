"""The Claude Code plugin and marketplace, and the Codex skill installer.

Schema checks follow Claude Code's plugin documentation (plugin manifest reference, marketplace reference,
hooks, slash commands) and the Agent Skills SKILL.md rules: the required fields and their types, kebab-case
names, relative sources that start with "./" and resolve to the plugin, hook event names and command
entries, and frontmatter. With SKILLGRAD_CLAUDE_BIN pointing at a `claude` binary, Claude Code's own
`claude plugin validate` / `marketplace add` / `install` run too (in a temporary HOME).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillgrad.integrations import codex

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "plugins" / "claude-code"
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
RESERVED_MARKETPLACES = {"claude-code-marketplace", "claude-code-plugins", "claude-plugins-official",
                         "anthropic-marketplace", "anthropic-plugins", "agent-skills", "life-sciences"}
HOOK_EVENTS = {"PreToolUse", "PostToolUse", "Notification", "UserPromptSubmit", "Stop", "SubagentStop",
               "PreCompact", "SessionStart", "SessionEnd"}


def _frontmatter(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path}: no YAML frontmatter"
    head, _, body = text[4:].partition("\n---\n")
    data = yaml.safe_load(head)
    assert isinstance(data, dict), f"{path}: frontmatter is not a mapping"
    return data, body


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def check_plugin_manifest(plugin_dir: Path) -> dict[str, Any]:
    m = json.loads((plugin_dir / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert isinstance(m, dict) and _is_str(m.get("name")) and KEBAB.match(m["name"]), "name: required kebab-case"
    assert "version" not in m or SEMVER.match(m["version"]), "version: semantic version"
    assert "description" not in m or _is_str(m["description"])
    assert "author" not in m or (isinstance(m["author"], dict) and _is_str(m["author"].get("name")))
    assert "keywords" not in m or all(_is_str(k) for k in m["keywords"])
    for key in ("commands", "agents", "skills", "hooks", "mcpServers"):  # custom paths must be ./relative
        for p in ([m[key]] if isinstance(m.get(key), str) else m.get(key) or []):
            if isinstance(p, str):
                assert p.startswith("./"), f"{key}: {p} must start with ./"
    # Components sit at the plugin root, never inside .claude-plugin/.
    assert sorted(p.name for p in (plugin_dir / ".claude-plugin").iterdir()) == ["plugin.json"]
    return m


def check_marketplace(root: Path) -> dict[str, Any]:
    mk = json.loads((root / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    assert _is_str(mk.get("name")) and KEBAB.match(mk["name"]) and mk["name"] not in RESERVED_MARKETPLACES
    assert isinstance(mk.get("owner"), dict) and _is_str(mk["owner"].get("name")), "owner.name: required"
    assert isinstance(mk.get("plugins"), list) and mk["plugins"], "plugins: a non-empty array"
    for entry in mk["plugins"]:
        assert _is_str(entry.get("name")) and KEBAB.match(entry["name"])
        source = entry.get("source")
        assert isinstance(source, str) and source.startswith("./"), "source: a relative path starting with ./"
        plugin_dir = (root / source).resolve()
        assert root in plugin_dir.parents, "source must stay inside the marketplace"
        manifest = check_plugin_manifest(plugin_dir)
        assert manifest["name"] == entry["name"] and manifest.get("version") == entry.get("version")
    return mk


def check_skill(skill_md: Path) -> dict[str, Any]:
    fm, body = _frontmatter(skill_md)
    assert _is_str(fm.get("name")) and KEBAB.match(fm["name"]) and len(fm["name"]) <= 64
    assert fm["name"] == skill_md.parent.name, "the skill's name is its folder's name"
    assert _is_str(fm.get("description")) and len(fm["description"]) <= 1024
    assert body.strip()
    return fm


def test_marketplace_and_plugin_manifests_follow_the_documented_schema() -> None:
    mk = check_marketplace(ROOT)
    assert [p["source"] for p in mk["plugins"]] == ["./plugins/claude-code"]


def test_slash_commands_have_frontmatter_and_the_skill_explains_them() -> None:
    commands = {p.stem: p for p in (PLUGIN / "commands").glob("*.md")}
    assert set(commands) == {"sleep", "sleep-status"}
    for path in commands.values():
        fm, body = _frontmatter(path)
        assert _is_str(fm.get("description"))
        tools = fm.get("allowed-tools", "")
        assert isinstance(tools, (str, list)) and "Bash(skillgrad sleep" in str(tools)
        assert "skillgrad sleep" in body
    _, sleep_body = _frontmatter(commands["sleep"])
    assert "$ARGUMENTS" in sleep_body and "Do not run `skillgrad sleep adopt`" in sleep_body
    assert "!`skillgrad sleep status" in commands["sleep-status"].read_text(encoding="utf-8")
    fm = check_skill(PLUGIN / "skills" / "skillgrad-sleep" / "SKILL.md")
    assert "/sleep" in (PLUGIN / "skills" / "skillgrad-sleep" / "SKILL.md").read_text() and fm["description"]


def test_session_end_hook_only_appends_a_line(tmp_path: Path) -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert set(hooks["hooks"]) <= HOOK_EVENTS and list(hooks["hooks"]) == ["SessionEnd"]
    (group,) = hooks["hooks"]["SessionEnd"]
    (hook,) = group["hooks"]
    assert hook["type"] == "command" and isinstance(hook.get("timeout", 1), int)
    script = Path(hook["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(PLUGIN)))
    assert script.is_file() and os.access(script, os.X_OK)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    payload = {"session_id": "5eed-0001", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": "/work/app",
               "hook_event_name": "SessionEnd", "reason": "logout"}
    for _ in range(2):
        r = subprocess.run([str(script)], input=json.dumps(payload, indent=2), env=env, capture_output=True,
                           text=True, timeout=10)
        assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    lines = (tmp_path / ".skillgrad" / "session-end.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(ln.split("\t")[1:] == ["session_end", "5eed-0001", "logout", "/work/app"]
                                   for ln in lines)
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["session-end.log"]  # nothing else


def _skillgrad(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "skillgrad.cli", *args], env=env, capture_output=True, text=True,
                          timeout=60)


def test_codex_installer_in_a_temporary_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    r = _skillgrad("integrations", "codex", "install", home=home)
    assert r.returncode == 0, r.stderr
    installed = home / ".agents" / "skills" / "skillgrad-sleep" / "SKILL.md"
    assert installed.read_text(encoding="utf-8") == codex.skill_text()
    fm = check_skill(installed)
    assert "sleep" in fm["description"] and "skillgrad sleep adopt" in installed.read_text()
    assert _skillgrad("integrations", "codex", "install", home=home).returncode == 0  # idempotent
    r = _skillgrad("integrations", "codex", "uninstall", home=home)
    assert r.returncode == 0 and not installed.parent.exists() and (home / ".agents" / "skills").is_dir()
    r = _skillgrad("integrations", "codex", "uninstall", home=home)
    assert r.returncode == 0 and "nothing to remove" in r.stdout
    # A skill of the same name that the user wrote is neither overwritten nor removed.
    own = home / ".agents" / "skills" / "skillgrad-sleep" / "SKILL.md"
    own.parent.mkdir(parents=True)
    own.write_text("mine", encoding="utf-8")
    for action in ("install", "uninstall"):
        r = _skillgrad("integrations", "codex", action, home=home)
        assert r.returncode == 2 and "not installed by skillgrad" in r.stderr and own.read_text() == "mine"
    # The shell installer is the same command.
    own.unlink()
    own.parent.rmdir()
    env = {**os.environ, "HOME": str(home), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    sh = subprocess.run([str(ROOT / "plugins" / "codex" / "install.sh")], env=env, capture_output=True, text=True,
                        timeout=60)
    assert sh.returncode == 0, sh.stderr
    assert installed.is_file()


CLAUDE_BIN = os.environ.get("SKILLGRAD_CLAUDE_BIN", "")


@pytest.mark.skipif(not CLAUDE_BIN, reason="set SKILLGRAD_CLAUDE_BIN to a `claude` binary to run Claude Code's "
                                           "own validator and installer")
def test_claude_code_validates_and_installs_the_plugin(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}

    def claude(*args: str) -> str:
        r = subprocess.run([CLAUDE_BIN, *args], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout + r.stderr

    assert "Validation passed" in claude("plugin", "validate", str(ROOT))
    assert "Validation passed" in claude("plugin", "validate", str(PLUGIN))
    claude("plugin", "marketplace", "add", str(ROOT))
    claude("plugin", "install", "skillgrad-sleep@skillgrad")
    listed = claude("plugin", "list")
    assert "skillgrad-sleep@skillgrad" in listed and "enabled" in listed


@pytest.mark.parametrize("field,value", [("name", "Skill Grad"), ("version", "one"), ("author", "me"),
                                         ("name", None)])
def test_the_manifest_check_rejects_what_the_docs_forbid(tmp_path: Path, field: str, value: Any) -> None:
    import shutil

    plugin = tmp_path / "p"
    shutil.copytree(PLUGIN, plugin)
    path = plugin / ".claude-plugin" / "plugin.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    if value is None:
        m.pop(field)
    else:
        m[field] = value
    path.write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(AssertionError):
        check_plugin_manifest(plugin)
