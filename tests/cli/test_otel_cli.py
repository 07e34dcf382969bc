"""``regista export``: console output, OTLP/HTTP to a receiver on 127.0.0.1, and the one-line
errors for bad input and endpoints that are down or refuse the spans."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from builders import rich_agent
from fakes.otlp_receiver import OtlpReceiver

from regista.cli import main as cli_main
from regista.cli.cmd_export import DEFAULT_ENDPOINT, resolve_endpoint
from regista.errors import UserError
from regista.trace.reader import Trace


@pytest.fixture(autouse=True)
def _only_export(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the command under test is registered, so these tests do not depend on the
    # other command modules (tests/conftest.py keeps the machine's OTEL_* settings out).
    monkeypatch.setattr(cli_main, "COMMANDS", ["export"])


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("otel-cli")
    return rich_agent(folder).run_sync("Weather in Paris and Rome?").trace_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _console_spans(text: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    spans, i = [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        obj, i = decoder.raw_decode(text, i)
        spans.append(obj)
    return spans


def _longest_value(spans: list[dict[str, Any]]) -> int:
    return max(len(v) for s in spans for v in s["attributes"].values() if isinstance(v, str))


def test_console_prints_every_span(trace_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main.main(["export", str(trace_path), "--console"]) == 0
    captured = capsys.readouterr()
    spans = _console_spans(captured.out)
    names = [s["name"] for s in spans]
    assert names[-1] == "invoke_agent regista"
    assert "execute_tool get_weather" in names
    assert "chat claude-sonnet-4-6" in names
    root = spans[-1]
    assert root["resource"]["attributes"]["service.name"] == "regista"
    assert root["attributes"]["gen_ai.conversation.id"] == Trace.load(trace_path).session_id
    assert captured.err.startswith(f"printed {len(spans)} spans of session ")
    assert "gen_ai.input.messages" not in captured.out


def _check_cut(out: str, limit: int) -> None:
    """Plain values are at most ``limit`` long; JSON values are still valid JSON, message
    lists still messages (cut at whole messages and parts)."""
    import json

    json_keys = (
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    )
    for span in _console_spans(out):
        for key, value in span["attributes"].items():
            if not isinstance(value, str):
                continue
            mime = span["attributes"].get(key[: -len(".value")] + ".mime_type")
            if key in json_keys or (key.endswith(".value") and mime == "application/json"):
                parsed = json.loads(value)
                if key.endswith("messages"):
                    assert all({"role", "parts"} <= m.keys() for m in parsed)
                    assert all(m["role"] in ("user", "assistant", "tool") for m in parsed)
            else:
                assert len(value) <= limit, (key, value)


def test_values_can_be_cut_to_a_length(
    trace_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With content, every chat span carries the conversation so far: values can be capped,
    by option or by the standard environment variable, and stay valid JSON."""
    args = ["export", str(trace_path), "--console", "--include-content"]
    assert cli_main.main(args) == 0
    assert _longest_value(_console_spans(capsys.readouterr().out)) > 300
    assert cli_main.main([*args, "--max-value-chars", "300"]) == 0
    out = capsys.readouterr().out
    assert _longest_value(_console_spans(out)) <= 300
    _check_cut(out, 300)
    monkeypatch.setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "200")
    assert cli_main.main(args) == 0
    out = capsys.readouterr().out
    assert _longest_value(_console_spans(out)) <= 200
    _check_cut(out, 200)
    assert cli_main.main([*args, "--max-value-chars", "0"]) == 2
    assert "--max-value-chars must be a positive" in capsys.readouterr().err


def test_cutting_values_is_not_warned_about_value_by_value(
    trace_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """No warning per value cut: the option asked for the cut. Even a tiny limit keeps the
    JSON values valid."""
    args = ["export", str(trace_path), "--console", "--include-content"]
    with caplog.at_level(logging.WARNING):
        assert cli_main.main([*args, "--max-value-chars", "20"]) == 0
    _check_cut(capsys.readouterr().out, 20)
    assert [r.getMessage() for r in caplog.records] == []


def test_otlp_to_a_receiver(trace_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with OtlpReceiver() as receiver:
        code = cli_main.main(
            ["export", str(trace_path), "--otlp", receiver.url, "--include-content",
             "--service-name", "ci-agents"]
        )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert receiver.requests == 1  # all spans in one request
    assert out.startswith(f"exported {len(receiver.spans)} spans of session ")
    assert out.rstrip().endswith(f"to {receiver.url}")
    root = next(s for s in receiver.spans if s.name == "invoke_agent regista")
    assert root.resource["service.name"] == "ci-agents"
    assert "gen_ai.input.messages" in root.attributes  # --include-content
    steps = [s for s in receiver.spans if "regista.step" in s.attributes]
    assert sorted(s.attributes["regista.step"] for s in steps) == list(
        range(len(Trace.load(trace_path).steps()))
    )


def test_base_url_gets_the_traces_path(
    trace_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OtlpReceiver() as receiver:
        assert cli_main.main(["export", str(trace_path), "--otlp", receiver.base_url]) == 0
    assert receiver.spans
    assert "gen_ai.input.messages" not in receiver.spans[-1].attributes


def test_endpoint_from_the_environment(
    trace_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base_url + "/")
        assert cli_main.main(["export", str(trace_path)]) == 0
    assert receiver.spans


def test_resolve_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_endpoint(None) == DEFAULT_ENDPOINT
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    assert resolve_endpoint(None) == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://x.example/otel/v1/traces")
    assert resolve_endpoint(None) == "https://x.example/otel/v1/traces"
    assert resolve_endpoint("http://127.0.0.1:4318/") == "http://127.0.0.1:4318/v1/traces"
    with pytest.raises(UserError, match="http"):
        resolve_endpoint("localhost:4318")


def test_unreachable_endpoint_is_one_line(
    trace_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1/traces"
    code = cli_main.main(["export", str(trace_path), "--otlp", url, "--timeout", "0.5"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith(f"regista: could not export to {url}: cannot connect (")
    assert "collector" in err
    assert "Traceback" not in err


def test_endpoint_that_refuses_is_one_line(
    trace_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OtlpReceiver() as receiver:
        url = receiver.base_url + "/not/traces"
        code = cli_main.main(["export", str(trace_path), "--otlp", url])
    err = capsys.readouterr().err
    assert code == 1
    assert err == f"regista: could not export to {url}: the endpoint answered HTTP 404 Not Found\n"


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["export", "missing.jsonl", "--console"], 2, "missing.jsonl: no such trace file"),
        (["export", "TRACE", "--otlp", "ftp://host"], 2, "wants an http(s) URL"),
        (["export", "TRACE", "--timeout", "0"], 2, "--timeout must be"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str],
    code: int,
    message: str,
    trace_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = [str(trace_path) if a == "TRACE" else a for a in argv]
    assert cli_main.main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith("regista: ")
    assert message in err
    assert err.count("\n") == 1


def test_corrupt_trace_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n{}\n")
    assert cli_main.main(["export", str(bad), "--console"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"regista: {bad}:1: not valid JSON")
    assert err.count("\n") == 1


_WITHOUT = """
import sys
sys.modules[sys.argv[1]] = None  # as if not installed: its import fails
from regista.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize(
    ("missing", "where"),
    [
        ("opentelemetry", ["--console"]),  # the extra not installed at all
        ("opentelemetry", ["--otlp", "http://127.0.0.1:9/v1/traces"]),
        ("opentelemetry.exporter", ["--otlp", "http://127.0.0.1:9/v1/traces"]),  # half of it
    ],
)
def test_without_the_otel_extra_one_line_says_what_to_install(
    missing: str, where: list[str], trace_path: Path
) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT, missing, "export", str(trace_path), *where],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "regista: OpenTelemetry export needs the 'otel' extra: "
        "pip install 'regista-harness[otel]'\n"
    )
