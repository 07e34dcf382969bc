"""``regista record|replay|fork|rewind … -- codex …``: point the Codex CLI at regista.

Codex reads its model provider from its own configuration (``$CODEX_HOME/config.toml``,
``model_provider`` and ``[model_providers.<id>]``), not from ``OPENAI_BASE_URL``. When the
child command is Codex (``codex …``, ``npx [@openai/]codex …``, ``node …/codex.js …``),
regista reads that configuration (never writes it) and adds, right after the ``codex`` word,
``-c`` overrides that select a provider of its own, ``regista``:

- a copy of the provider the user's configuration selects (their own ``[model_providers.<id>]``
  table: ``env_key``, headers, query parameters, ``wire_api``…; or, for Codex's built-in
  ``openai`` provider, ``wire_api = "responses"`` and ``requires_openai_auth = true``, so
  Codex's own login, API key or ``CODEX_API_KEY``, still authenticates the calls);
- with ``base_url`` at regista's server, and ``supports_websockets = false`` (regista speaks
  HTTP and SSE; Codex otherwise tries a Responses WebSocket first);
- under a replay or a fork, ``stream_max_retries = 0`` and ``request_max_retries = 0``: a
  replay's 409 is final, and Codex would otherwise send the same request five more times.

Values of the user's table that may be secrets (a bearer token, static headers) go to the
child's environment (``env_key``, ``env_http_headers``), never onto its command line.

The provider's own ``base_url`` is where regista forwards live calls; for ``openai``, Codex's
``openai_base_url``, else ``OPENAI_BASE_URL`` (which Codex itself ignores: regista's rule for
every OpenAI client), else the public API. See docs/clients.md.
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regista.errors import UserError

__all__ = ["CodexChild", "codex_child", "codex_word", "toml_value"]

#: The provider id regista's overrides define and select.
PROVIDER_ID = "regista"
#: Codex's built-in provider, and where it sends calls unless ``openai_base_url`` says.
OPENAI_ID = "openai"
OPENAI_API = "https://api.openai.com/v1"
#: What Codex's built-in ``openai`` provider sends besides the key (from the environment).
_OPENAI_ENV_HEADERS = {
    "OpenAI-Organization": "OPENAI_ORGANIZATION",
    "OpenAI-Project": "OPENAI_PROJECT",
}
_CODEX_NAMES = {"codex", "codex.exe", "codex.js", "@openai/codex"}
_LAUNCHERS = {"npx", "pnpx", "bunx"}
#: npx options that take a value in the next argument.
_LAUNCHER_VALUE_OPTIONS = {"-p", "--package", "-c", "--call", "--cache", "--registry"}
_CONFIG_FLAG = re.compile(r"^(?:-c|--config)(?:=(.*))?$")
_PROFILE_FLAG = re.compile(r"^(?:-p|--profile)(?:=(.*))?$")


def codex_word(cmd: list[str]) -> int | None:
    """The index of the word that runs Codex in ``cmd`` (its own options follow), if any."""
    if not cmd:
        return None
    first = Path(cmd[0]).name
    if _is_codex(first):
        return 0
    if first in ("node", "node.exe") and len(cmd) > 1 and _is_codex(Path(cmd[1]).name):
        return 1
    if first in _LAUNCHERS:
        i = 1
        while i < len(cmd) and cmd[i].startswith("-"):
            if cmd[i] == "--":
                i += 1
                break
            i += 2 if cmd[i] in _LAUNCHER_VALUE_OPTIONS else 1
        if i < len(cmd) and _is_codex(cmd[i]):
            return i
    return None


def _is_codex(word: str) -> bool:
    name = word.rsplit("@", 1)[0] if word.rfind("@") > 0 else word  # @openai/codex@0.171.0
    return name in _CODEX_NAMES


@dataclass
class CodexChild:
    """Codex's provider as the user's configuration selects it, and how to redirect it."""

    word: int
    """Index of the ``codex`` word in the command."""
    provider: str
    """The provider id the user's configuration selects."""
    upstream: str
    """Where that provider sends calls: where regista forwards them."""
    table: dict[str, Any] = field(default_factory=dict)
    """The provider table regista defines (less ``base_url``)."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables the child needs besides: the provider's secrets from the configuration,
    passed in the environment (private to the child) rather than on its command line
    (which any user of the machine can read)."""

    @property
    def key_env(self) -> str | None:
        """The environment variable that holds the provider's key, if it names one."""
        value = self.table.get("env_key")
        return value if isinstance(value, str) and value else None

    def command(self, cmd: list[str], base_url: str, *, replay: bool) -> list[str]:
        """``cmd`` with the overrides that send Codex's calls to ``base_url``.

        Args:
            cmd: The command, as given (the user's arguments are kept as they are).
            base_url: Regista's server, as the provider's ``base_url``.
            replay: A replay or fork: a 409 must not be retried.
        """
        table = {**self.table, "base_url": base_url, "supports_websockets": False}
        if replay:
            table["request_max_retries"] = 0
            table["stream_max_retries"] = 0
        select = ["-c", f"model_provider={toml_value(PROVIDER_ID)}"]
        ours = [*select, "-c", f"model_providers.{PROVIDER_ID}={toml_value(table)}"]
        head, rest = cmd[: self.word + 1], cmd[self.word + 1 :]
        out = [*head, *ours]
        # A later ``-c model_provider=…`` of the user's would win over ours: select ours again
        # right after it.
        for arg, value in _args_with_config(rest):
            out.append(arg)
            if value is not None and _dotted(value)[0] == "model_provider":
                out += select
        return out


def _args_with_config(args: list[str]) -> list[tuple[str, str | None]]:
    """Each argument with the ``key=value`` it gives when it is a ``-c`` value."""
    out: list[tuple[str, str | None]] = []
    pending = False
    for arg in args:
        if pending:
            out.append((arg, arg))
            pending = False
            continue
        m = _CONFIG_FLAG.match(arg)
        if m and m.group(1) is None:
            pending = True
            out.append((arg, None))
        elif m:
            out.append((arg, m.group(1)))
        elif arg.startswith("-c") and len(arg) > 2 and not arg.startswith("--"):
            out.append((arg, arg[2:]))
        else:
            out.append((arg, None))
    return out


def _dotted(value: str) -> tuple[str, Any]:
    """``a.b=v`` as ``("a.b", v)``; ``v`` parsed as TOML, else the raw string (as Codex does)."""
    key, _, raw = value.partition("=")
    key = key.strip()
    try:
        parsed: Any = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = raw
    return key, parsed


def _set(config: dict[str, Any], dotted: str, value: Any) -> None:
    parts = [p.strip().strip('"') for p in dotted.split(".") if p.strip()]
    if not parts:
        return
    node = config
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def _merge(base: dict[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: a NUL in the name
        raise UserError(f"cannot read Codex's configuration {path!r}: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"Codex's configuration {path} is not valid TOML: {exc}") from None


def effective_config(args: list[str], env: Mapping[str, str]) -> dict[str, Any]:
    """Codex's configuration as ``args`` (the arguments after ``codex``) would see it:
    ``config.toml``, the profile (``-p NAME``: ``NAME.config.toml`` or ``[profiles.NAME]``),
    then the ``-c`` overrides."""
    from regista.store.homes import codex_home

    home = codex_home(env)
    config = _load(home / "config.toml")
    overrides: list[tuple[str, Any]] = []
    profile = config.get("profile") if isinstance(config.get("profile"), str) else None
    pending_profile = False
    for arg, value in _args_with_config(args):
        if pending_profile:
            profile, pending_profile = arg, False
            continue
        if value is not None:
            overrides.append(_dotted(value))
            continue
        m = _PROFILE_FLAG.match(arg)
        if m:
            if m.group(1) is None:
                pending_profile = True
            else:
                profile = m.group(1)
    for key, value in overrides:  # ``-c profile=…`` chooses the profile too
        if key == "profile" and isinstance(value, str):
            profile = value
    if profile:
        layer = _load(home / f"{profile}.config.toml")
        legacy = config.get("profiles")
        if not layer and isinstance(legacy, dict) and isinstance(legacy.get(profile), dict):
            layer = legacy[profile]
        config = _merge(config, layer)
    for key, value in overrides:
        _set(config, key, value)
    return config


def codex_child(cmd: list[str], env: Mapping[str, str] | None = None) -> CodexChild | None:
    """How to redirect ``cmd`` when it runs Codex (``None`` when it does not).

    Raises:
        UserError: the configuration cannot be read, or selects a provider regista cannot
            reach (one of Codex's local built-ins, or ``--oss``).
    """
    word = codex_word(cmd)
    if word is None:
        return None
    env = os.environ if env is None else env
    args = cmd[word + 1 :]
    if "--oss" in args:
        raise UserError(
            "regista cannot redirect `codex --oss` (Codex picks a local provider itself): "
            "define the provider in [model_providers.<id>] of Codex's config.toml, with its "
            "base_url, and select it with model_provider"
        )
    config = effective_config(args, env)
    provider = config.get("model_provider", OPENAI_ID)
    if not isinstance(provider, str) or not provider:
        raise UserError(f"Codex's model_provider must be a provider id, found {provider!r}")
    providers = config.get("model_providers")
    table = providers.get(provider) if isinstance(providers, dict) else None
    if provider == OPENAI_ID:
        base = config.get("openai_base_url") or env.get("OPENAI_BASE_URL")
        upstream = base if isinstance(base, str) and base else OPENAI_API
        built_in: dict[str, Any] = {
            "name": "OpenAI (through regista)",
            "wire_api": "responses",
            "requires_openai_auth": True,
            "env_http_headers": dict(_OPENAI_ENV_HEADERS),
        }
        return CodexChild(word, provider, upstream, built_in)
    if not isinstance(table, dict):
        from regista.store.homes import codex_home

        raise UserError(
            f"Codex's model_provider is {provider!r}, which its config.toml "
            f"({codex_home(env) / 'config.toml'}) does not define under [model_providers."
            f"{provider}]: regista reaches Codex's built-in 'openai' provider and the ones the "
            "configuration defines (with their base_url)"
        )
    base = table.get("base_url")
    upstream = base if isinstance(base, str) and base else OPENAI_API
    own = {k: v for k, v in table.items() if k != "base_url"}
    own.setdefault("name", provider)
    own, secrets = _secrets_to_env(own)
    return CodexChild(word, provider, upstream, own, secrets)


#: Where the provider's configured secrets go in the child's environment.
_BEARER_ENV = "REGISTA_CODEX_BEARER_TOKEN"
_HEADER_ENV = "REGISTA_CODEX_HEADER_{}"


def _secrets_to_env(table: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``table`` with the values that may be secrets (``experimental_bearer_token``, the
    static ``http_headers``) moved to environment variables Codex reads (``env_key``,
    ``env_http_headers``)."""
    table = dict(table)
    env: dict[str, str] = {}
    token = table.pop("experimental_bearer_token", None)
    if isinstance(token, str) and token:
        # Codex prefers the configured token to ``env_key``: the token, from a variable
        env[_BEARER_ENV] = token
        table["env_key"] = _BEARER_ENV
    headers = table.pop("http_headers", None)
    if isinstance(headers, dict) and headers:
        from_env = table.get("env_http_headers")
        merged = dict(from_env) if isinstance(from_env, dict) else {}
        for n, (name, value) in enumerate(headers.items()):
            var = _HEADER_ENV.format(n)
            env[var] = value if isinstance(value, str) else toml_value(value)
            merged[str(name)] = var
        table["env_http_headers"] = merged
    return table, env


# -- TOML values for ``-c key=value`` ----------------------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_value(value: Any) -> str:
    """``value`` as a TOML value on one line (inline tables, arrays, basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise UserError(f"cannot pass {value!r} to Codex as a configuration value")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
