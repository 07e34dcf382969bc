"""Seeded fuzz: Codex's configuration (config.toml, profiles, ``-c`` arguments) as
``regista … -- codex`` reads it.

Whatever the file and the arguments hold, reading them gives the redirect or one
:class:`UserError`; and the overrides regista adds always parse as the TOML Codex reads.
"""

from __future__ import annotations

import random
import tomllib
import traceback
from pathlib import Path
from typing import Any

from mutate import base_seed, iterations

from regista.cli.codex_child import codex_child, toml_value
from regista.errors import UserError

_VALUES: list[Any] = [
    "openai",
    "corp",
    "",
    "ollama",
    "a.b",
    'q"x',
    "💥\u0000",
    0,
    -1,
    True,
    1.5,
    [],
    ["x"],
    {},
    {"base_url": 3},
    {"base_url": "http://h/v1", "env_key": None},
]
_KEYS = [
    "model_provider",
    "openai_base_url",
    "profile",
    "model_providers",
    "model_providers.corp",
    "model_providers.corp.base_url",
    "model_providers.corp.env_key",
    "model_providers.corp.http_headers",
    "model_providers.corp.query_params",
    "model_providers.openai.base_url",
    "profiles.p.model_provider",
    "profiles.p",
]
_GOOD = """model_provider = "corp"
[model_providers.corp]
base_url = "http://127.0.0.1:9/v1"
env_key = "CORP_KEY"
http_headers = { "X-A" = "b" }
[profiles.p]
model_provider = "openai"
"""


def _toml_line(rng: random.Random) -> str:
    key = rng.choice(_KEYS)
    value = rng.choice(_VALUES)
    if isinstance(value, str) and rng.random() < 0.2:
        return f"{key} = {value}"  # not TOML: a bare word
    try:
        return f"{key} = {toml_value(value)}"
    except UserError:
        return f"{key} = 1"


def _config(rng: random.Random) -> bytes:
    lines = _GOOD.splitlines()
    for _ in range(rng.randint(0, 4)):
        roll = rng.random()
        if roll < 0.5:
            lines.insert(rng.randint(0, len(lines)), _toml_line(rng))
        elif roll < 0.7 and lines:
            del lines[rng.randrange(len(lines))]
        elif lines:
            i = rng.randrange(len(lines))
            lines[i] = lines[i][: rng.randint(0, len(lines[i]))]
    data = "\n".join(lines).encode()
    if rng.random() < 0.1 and data:
        i = rng.randrange(len(data))
        data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]
    return data


def _args(rng: random.Random) -> list[str]:
    args: list[str] = []
    for _ in range(rng.randint(0, 4)):
        roll = rng.random()
        if roll < 0.4:
            args += ["-c", _toml_line(rng).replace(" = ", "=", 1)]
        elif roll < 0.5:
            args.append("--config=" + _toml_line(rng).replace(" = ", "="))
        elif roll < 0.6:
            args += rng.choice([["-p", "p"], ["--profile"], ["-p", "missing"], ["--oss"]])
        else:
            args.append(
                rng.choice(["exec", "--skip-git-repo-check", "-c", "hi", "-cmodel_provider"])
            )
    return args


def test_any_codex_configuration_reads_as_a_redirect_or_one_clear_error(tmp_path: Path) -> None:
    rng = random.Random(base_seed())
    home = tmp_path / "codex-home"
    home.mkdir()
    env = {"CODEX_HOME": str(home), "HOME": str(tmp_path)}
    failures: list[str] = []
    tried = redirected = 0
    for n in range(iterations(150)):
        config = _config(rng)
        args = _args(rng)
        (home / "config.toml").write_bytes(config)
        (home / "p.config.toml").write_bytes(_config(rng) if rng.random() < 0.3 else b"")
        cmd = ["codex", *args, "exec", "task"]
        tried += 1
        try:
            child = codex_child(cmd, env)
            assert child is not None
            out = child.command(cmd, "http://127.0.0.1:1/v1", replay=bool(n % 2))
            ours = [
                v
                for v in out
                if v.startswith(('model_provider="regista"', "model_providers.regista="))
            ]
            assert len(ours) >= 2
            for value in ours:  # what regista adds is TOML Codex reads
                tomllib.loads("v" + value.partition("=")[1] + value.partition("=")[2])
            redirected += 1
        except UserError as exc:
            assert str(exc) and "\n" not in str(exc).strip()
        except Exception:
            failures.append(
                f"seed {base_seed()} variant {n}: config {config[:300]!r} args {args!r}\n"
                + traceback.format_exc(limit=4)
            )
    assert not failures, f"{len(failures)} of {tried} failed:\n" + "\n".join(failures[:3])
    assert redirected > tried // 10  # the fuzz reaches the redirect, not only the errors
