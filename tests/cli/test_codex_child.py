"""How ``regista record|replay|fork -- codex …`` redirects the Codex CLI (its config, read
only; overrides added to its arguments). The real CLI runs in tests/conformance."""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path
from typing import Any

import pytest

from regista.cli.codex_child import codex_child, codex_word, toml_value
from regista.errors import UserError

URL = "http://127.0.0.1:9/v1/record/openai"


def _home(tmp_path: Path, config: str = "", **files: str) -> dict[str, str]:
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    if config:
        (home / "config.toml").write_text(config)
    for name, text in files.items():
        (home / name).write_text(text)
    return {"CODEX_HOME": str(home), "HOME": str(tmp_path)}


def _overrides(cmd: list[str]) -> list[tuple[str, Any]]:
    """The ``-c key=value`` pairs of ``cmd``, parsed as Codex parses them (TOML)."""
    out = []
    for flag, value in itertools.pairwise(cmd):
        if flag == "-c":
            key, _, raw = value.partition("=")
            try:
                out.append((key, tomllib.loads(f"v = {raw}")["v"]))
            except tomllib.TOMLDecodeError:  # Codex takes such a value as a string
                out.append((key, raw))
    return out


@pytest.mark.parametrize(
    ("cmd", "word"),
    [
        (["codex", "exec", "hi"], 0),
        (["/opt/bin/codex", "exec"], 0),
        (["node", "/x/node_modules/@openai/codex/bin/codex.js", "exec"], 1),
        (["npx", "-y", "@openai/codex@0.171.0", "exec"], 2),
        (["npx", "--package", "x", "codex"], 3),
        (["npx", "codex", "exec"], 1),
        (["python", "agent.py", "codex"], None),
        (["codexx"], None),
        (["npx", "cowsay", "codex"], None),
        ([], None),
    ],
)
def test_the_codex_word_is_found(cmd: list[str], word: int | None) -> None:
    assert codex_word(cmd) == word


def test_the_default_provider_becomes_regista_s_with_codex_s_own_login(tmp_path: Path) -> None:
    env = _home(tmp_path)
    child = codex_child(["codex", "exec", "--skip-git-repo-check", "hi"], env)
    assert child is not None
    assert (child.provider, child.upstream) == ("openai", "https://api.openai.com/v1")
    cmd = child.command(["codex", "exec", "--skip-git-repo-check", "hi"], URL, replay=False)
    assert cmd[0] == "codex" and cmd[-3:] == ["exec", "--skip-git-repo-check", "hi"]
    over = dict(_overrides(cmd))
    assert over["model_provider"] == "regista"
    table = over["model_providers.regista"]
    assert table["base_url"] == URL
    assert table["wire_api"] == "responses"
    assert table["requires_openai_auth"] is True  # Codex's login / CODEX_API_KEY flows
    assert table["supports_websockets"] is False
    assert "stream_max_retries" not in table  # a recording retries as the user's Codex does
    assert child.key_env is None


def test_openai_base_url_is_where_the_default_provider_goes(tmp_path: Path) -> None:
    env = {**_home(tmp_path), "OPENAI_BASE_URL": "http://env.example/v1"}
    child = codex_child(["codex", "exec", "x"], env)
    assert child is not None and child.upstream == "http://env.example/v1"
    env = _home(tmp_path, 'openai_base_url = "https://proxy.example/v1"\n')
    child = codex_child(["codex", "exec", "x"], {**env, "OPENAI_BASE_URL": "http://env.example"})
    assert child is not None and child.upstream == "https://proxy.example/v1"


def test_a_user_provider_is_copied_with_its_key_variable(tmp_path: Path) -> None:
    config = """
model = "gpt-5.5"
model_provider = "corp"
[model_providers.corp]
name = "Corp gateway"
base_url = "https://gateway.corp.example/openai/v1"
env_key = "CORP_KEY"
wire_api = "responses"
query_params = { "api-version" = "2025-04-01" }
http_headers = { "X-Team" = "a \\"quoted\\" team" }
"""
    env = _home(tmp_path, config)
    before = (tmp_path / "codex-home" / "config.toml").read_bytes()
    child = codex_child(["codex", "exec", "x"], env)
    assert child is not None
    assert child.upstream == "https://gateway.corp.example/openai/v1"
    assert child.key_env == "CORP_KEY"
    table = dict(_overrides(child.command(["codex", "exec", "x"], URL, replay=True)))[
        "model_providers.regista"
    ]
    assert table == {
        "name": "Corp gateway",
        "env_key": "CORP_KEY",
        "wire_api": "responses",
        "query_params": {"api-version": "2025-04-01"},
        # a static header may be a secret: from the child's environment, not its arguments
        "env_http_headers": {"X-Team": "REGISTA_CODEX_HEADER_0"},
        "base_url": URL,
        "supports_websockets": False,
        "request_max_retries": 0,  # a replay's 409 is final
        "stream_max_retries": 0,
    }
    assert child.env == {"REGISTA_CODEX_HEADER_0": 'a "quoted" team'}
    assert (tmp_path / "codex-home" / "config.toml").read_bytes() == before


def test_profiles_and_command_line_overrides_choose_the_provider(tmp_path: Path) -> None:
    config = """
model_provider = "a"
[model_providers.a]
base_url = "http://a.example/v1"
[model_providers.b]
base_url = "http://b.example/v1"
[profiles.legacy]
model_provider = "b"
"""
    env = _home(tmp_path, config, **{"work.config.toml": 'model_provider = "b"\n'})
    pick = {
        ("codex", "exec"): "a",
        ("codex", "-p", "work", "exec"): "b",
        ("codex", "--profile=legacy", "exec"): "b",
        ("codex", "exec", "-c", "model_provider=b"): "b",
        ("codex", "exec", "--config=model_provider='b'"): "b",
        ("codex", "exec", "-c", 'model_providers.a.base_url="http://c.example"'): "a",
    }
    for args, provider in pick.items():
        child = codex_child(list(args), env)
        assert child is not None and child.provider == provider, args
    moved = ["codex", "exec", "-c", 'model_providers.a.base_url="http://c.example"']
    child = codex_child(moved, env)
    assert child is not None and child.upstream == "http://c.example"


def test_the_user_s_own_model_provider_override_does_not_win_over_regista_s(
    tmp_path: Path,
) -> None:
    env = _home(tmp_path, '[model_providers.b]\nbase_url = "http://b.example/v1"\n')
    cmd = ["codex", "exec", "-c", "model_provider=b", "hi"]
    child = codex_child(cmd, env)
    assert child is not None and child.upstream == "http://b.example/v1"
    out = child.command(cmd, URL, replay=False)
    picks = [v for k, v in _overrides(out) if k == "model_provider"]
    assert picks[-1] == "regista"  # the last one is what Codex uses
    assert out[-1] == "hi"


@pytest.mark.parametrize(
    ("config", "args", "says"),
    [
        ('model_provider = "ollama"\n', [], "does not define"),
        ("model_provider = [1]\n", [], "provider id"),
        ("model_provider = \n", [], "not valid TOML"),
        ("", ["--oss"], "--oss"),
        ("", ["-c", 'profile="a\\u0000b"'], "cannot read"),  # was a ValueError (fuzz)
    ],
)
def test_what_regista_cannot_redirect_is_one_clear_error(
    tmp_path: Path, config: str, args: list[str], says: str
) -> None:
    env = _home(tmp_path, config)
    with pytest.raises(UserError, match=says):
        codex_child(["codex", *args, "exec", "x"], env)


def test_other_commands_are_left_alone(tmp_path: Path) -> None:
    assert codex_child(["python", "agent.py"], _home(tmp_path)) is None


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        'q"uote\\back\nline\ttab\x00\x1f\x7f',
        "é 💥",
        {"a b": {"c": [1, 2.5, True, "x"]}, "k-1": False},
        [],
        {},
    ],
)
def test_toml_values_read_back(value: Any) -> None:
    assert tomllib.loads(f"v = {toml_value(value)}")["v"] == value


def test_configured_secrets_go_to_the_child_s_environment_not_its_arguments(
    tmp_path: Path,
) -> None:
    config = """
model_provider = "corp"
[model_providers.corp]
base_url = "https://gateway.example/v1"
experimental_bearer_token = "sk-configured-token-123"
http_headers = { "api-key" = "sk-header-456" }
env_http_headers = { "X-Org" = "ORG_ID" }
"""
    child = codex_child(["codex", "exec", "x"], _home(tmp_path, config))
    assert child is not None
    cmd = child.command(["codex", "exec", "x"], URL, replay=False)
    assert not any("sk-configured-token-123" in a or "sk-header-456" in a for a in cmd)
    table = dict(_overrides(cmd))["model_providers.regista"]
    assert table["env_key"] == "REGISTA_CODEX_BEARER_TOKEN" == child.key_env
    assert table["env_http_headers"] == {"X-Org": "ORG_ID", "api-key": "REGISTA_CODEX_HEADER_0"}
    assert child.env == {
        "REGISTA_CODEX_BEARER_TOKEN": "sk-configured-token-123",
        "REGISTA_CODEX_HEADER_0": "sk-header-456",
    }
