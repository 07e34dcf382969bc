"""What the server and ``regista.client`` share (the wire shapes, SSE, accumulation, the
traces written from observed calls) lives in ``regista.wire``: the client imports no
module of the server's, and the wire imports neither of them."""

from __future__ import annotations

from fresh import fresh_python


def test_the_client_imports_no_server_module() -> None:
    code = (
        "import sys\n"
        "import regista.client as client\n"
        "from regista.wire import accumulate, openai_responses, sessions, shapes, sse\n"
        "client.ReplaySession._record_body, client._RecordedStream\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.startswith('regista.server') or m.startswith('starlette')))\n"
    )
    assert fresh_python(code).strip() == "[]"


def test_what_the_client_uses_loads_no_server_module() -> None:
    """The client's recording path imports what it needs when it runs: that is the wire."""
    code = (
        "import sys\n"
        "from regista.wire.openai_responses import ResponsesStream, responses_request\n"
        "from regista.wire.accumulate import AnthropicStream, OpenAIStream\n"
        "from regista.wire.sessions import SessionBook, substitute_tool_results\n"
        "from regista.wire.shapes import anthropic_request, openai_request\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.startswith(('regista.server', 'regista.client', 'starlette'))))\n"
    )
    assert fresh_python(code).strip() == "[]"


def test_neither_the_client_nor_the_wire_names_the_server() -> None:
    """Imports made inside functions run only when called: the source says them all."""
    import ast
    from pathlib import Path

    root = Path(__file__).parents[2] / "regista"
    files = [root / "client.py", *sorted((root / "wire").glob("*.py"))]
    bad = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            bad += [
                f"{path.name}:{node.lineno}: {n}" for n in names if n.startswith("regista.server")
            ]
            if path.parent.name == "wire":
                bad += [
                    f"{path.name}: {n}"
                    for n in names
                    if n.startswith(("regista.client", "starlette"))
                ]
    assert not bad, bad
