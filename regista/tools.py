"""Tools: ``@tool`` turns a typed function into a tool the model can call.

The JSON schema comes from the type hints (through pydantic) and the docstring: its
first paragraph describes the tool, its Google-style ``Args:`` section the parameters.
A tool that raises becomes an error tool result, never a crash of the run.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_type_hints

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from regista.errors import UserError
from regista.policy import ToolCallInfo

__all__ = ["Tool", "ToolOutcome", "ToolRegistry", "current_tool_call", "tool"]

_CURRENT_CALL: contextvars.ContextVar[ToolCallInfo | None] = contextvars.ContextVar(
    "regista_current_tool_call", default=None
)


def current_tool_call() -> ToolCallInfo | None:
    """The tool call being run (``.id`` is its ``tool_use_id``), or ``None`` outside a tool.

    A tool with an external effect can use ``current_tool_call().id`` as an idempotency key:
    the id is the same when ``resume`` runs a call again that was cut short mid-tool.
    """
    return _CURRENT_CALL.get()


@dataclass
class ToolOutcome:
    """What a tool call returned, as the model will see it."""

    content: str | list[dict[str, Any]]
    is_error: bool = False


@dataclass
class Tool:
    """A callable the model may use, with its JSON schema."""

    name: str
    description: str
    input_schema: dict[str, Any]
    fn: Callable[..., Any] | None = None
    model: type[BaseModel] | None = field(default=None, repr=False)
    #: A recorded schema served verbatim (replays rebuild tools from a trace this way).
    raw_schema: dict[str, Any] | None = field(default=None, repr=False)
    #: The schema made last, given again while its parts are the same objects, and the
    #: input schema it was copied from.
    _schema: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    _copied: Any = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_schema(cls, schema: dict[str, Any]) -> Tool:
        """A tool with no implementation, standing for a recorded one."""
        return cls(
            name=str(schema.get("name", "")),
            description=str(schema.get("description", "")),
            input_schema=dict(schema.get("input_schema") or {}),
            raw_schema=copy.deepcopy(schema),  # sent as it is now, whatever happens to it
        )

    @property
    def schema(self) -> dict[str, Any]:
        """The tool as the Messages API expects it: the same dict while the name, the
        description and the input schema are the same (the schema's contents compared with
        what was sent), so a request's tools are recognised by identity when it is hashed
        and written.

        The input schema is copied when the schema is made: what is sent is what the trace
        records. A schema changed in place later is seen by the comparison and sent (and
        recorded) changed, as is a new value assigned. The dict returned is the one sent:
        it must not be changed.
        """
        if self.raw_schema is not None:
            return self.raw_schema
        made = self._schema
        if (
            made is None
            or made["name"] is not self.name
            or made["description"] is not self.description
            or self._copied is not self.input_schema
            or made["input_schema"] != self.input_schema
        ):
            made = self._schema = {
                "name": self.name,
                "description": self.description,
                "input_schema": copy.deepcopy(self.input_schema),
            }
            self._copied = self.input_schema
        return made

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fn is None:
            raise UserError(f"tool {self.name!r} has no implementation")
        return self.fn(*args, **kwargs)

    async def invoke(
        self, arguments: dict[str, Any], call: ToolCallInfo | None = None
    ) -> ToolOutcome:
        """Validate ``arguments``, call the function, and render its return value.

        Args:
            arguments: The call's input.
            call: The call being run; the function sees it as :func:`current_tool_call`.
        """
        token = _CURRENT_CALL.set(call)
        try:
            return await self._invoke(arguments)
        finally:
            _CURRENT_CALL.reset(token)

    async def _invoke(self, arguments: dict[str, Any]) -> ToolOutcome:
        if self.fn is None:
            return ToolOutcome(f"tool {self.name!r} has no implementation here", True)
        if self.model is not None:
            try:
                parsed = self.model.model_validate(arguments)
            except ValidationError as exc:
                return ToolOutcome(f"Invalid input for {self.name}: {_short(exc)}", True)
            kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        else:
            kwargs = dict(arguments)
        if inspect.iscoroutinefunction(self.fn):
            value = await self.fn(**kwargs)
        else:  # to_thread copies the context: the thread sees current_tool_call() too
            value = await asyncio.to_thread(self.fn, **kwargs)
        if isinstance(value, ToolOutcome):
            return value
        return ToolOutcome(render(value))


def render(value: Any) -> str | list[dict[str, Any]]:
    """A tool's return value as tool_result content: strings as is, the rest as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(value)


def _short(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_SECTION = re.compile(r"^\s*[A-Z][A-Za-z ]+:\s*$")
_ARG_LINE = re.compile(r"^\s+(\*{0,2}\w+)\s*(\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary and per-argument descriptions of a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    i = 0
    while i < len(lines) and not _ARGS_HEADER.match(lines[i]) and not _SECTION.match(lines[i]):
        summary.append(lines[i])
        i += 1
    current: str | None = None
    in_args = False
    for line in lines[i:]:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if _SECTION.match(line):
            in_args = False
            continue
        if not in_args:
            continue
        m = _ARG_LINE.match("    " + line if not line.startswith(" ") else line)
        if m and (not line.startswith("        ") or current is None):
            current = m.group(1).lstrip("*")
            args[current] = m.group(3).strip()
        elif current and line.strip():
            args[current] = (args[current] + " " + line.strip()).strip()
    return "\n".join(summary).strip(), args


def tool(
    fn: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None
) -> Any:
    """Make a tool from a function (sync or async); usable bare or with arguments."""

    def wrap(f: Callable[..., Any]) -> Tool:
        summary, arg_docs = parse_docstring(f.__doc__)
        hints = get_type_hints(f)
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(f).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            annotation = hints.get(pname, Any)
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (annotation, Field(default, description=arg_docs.get(pname)))
        model = create_model(  # type: ignore[call-overload]
            f"{f.__name__}_input", __config__=ConfigDict(extra="forbid"), **fields
        )
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        return Tool(
            name=name or f.__name__,
            description=description or summary or f.__name__,
            input_schema=schema,
            fn=f,
            model=model,
        )

    return wrap(fn) if fn is not None else wrap


class ToolRegistry:
    """The tools of one agent, by name."""

    def __init__(self, tools: list[Tool | Callable[..., Any]] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools or []:
            self.add(t)

    def add(self, t: Tool | Callable[..., Any]) -> None:
        made: Tool = t if isinstance(t, Tool) else tool(t)
        if made.name in self._tools:
            raise UserError(f"two tools are named {made.name!r}")
        self._tools[made.name] = made

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Any:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema for t in self._tools.values()]
