"""Node definitions: pure data describing a node type's sockets, parameters and vocabulary.

A node folder's `definition.py` imports only this module (or `nodeflow_app.contract`).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

SocketType = Literal[
    "data", "tools", "model", "string", "text", "float", "int", "boolean",
    "json", "messages", "array", "document", "vector", "binary", "any",
]
Channel = Literal["flow", "link"]
Side = Literal["left", "right"]
ParameterMode = Literal["constant", "hybrid", "input", "output"]
ParameterType = Literal[
    "string", "text", "int", "float", "boolean", "select", "json",
    "key_value", "model", "code", "list",
]
ErrorMode = Literal["stop", "continue", "error_output"]
# The vocabularies as tuples, for whoever lists or checks them (normalizer, inspector, canvas catalog).
ERROR_MODES: tuple[str, ...] = get_args(ErrorMode)
PARAMETER_TYPES: tuple[str, ...] = get_args(ParameterType)
SOCKET_TYPES: tuple[str, ...] = get_args(SocketType)

# A value on a port: any JSON-like Python value (or, on link sockets, any artifact).
# The socket's `type` in the definition says what it is; values travel unboxed.
DataValue: TypeAlias = Any

# The output port every node gains when its error mode is `error_output`.
ERROR_HANDLE = "error"

# The socket type a parameter exposes when it is wired (hybrid / input / output modes).
PARAMETER_SOCKET_TYPES: dict[str, SocketType] = {
    "string": "string", "text": "text", "int": "int", "float": "float",
    "boolean": "boolean", "select": "string", "json": "json", "key_value": "json",
    "model": "model", "code": "text", "list": "array",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Socket(_Strict):
    """A port: the data spine (`data`, flow) or a typed side socket."""

    id: str
    label: str = ""
    type: SocketType = "data"
    channel: Channel = "flow"
    side: Side | None = None
    required: bool = False
    multiple: bool = False
    # Dynamic ports: the id holds `{index}` and repeats once per item of this list parameter.
    repeat: str | None = None
    description: str = ""


class Option(_Strict):
    value: Any
    label: str = ""


class Parameter(_Strict):
    """A node setting, edited inline; `hybrid` and `input` modes also expose a typed socket."""

    id: str
    label: str
    type: ParameterType = "string"
    mode: ParameterMode = "constant"
    default: Any = None
    description: str = ""
    placeholder: str = ""
    required: bool = False
    options: tuple[Option, ...] = ()
    min: float | None = None
    max: float | None = None
    step: float | None = None
    # For `list` parameters: the fields of each item (rendered as a small form per row).
    fields: tuple["Parameter", ...] = ()
    # False for parameters whose text must reach the node verbatim (code, templates).
    expressions: bool = True
    socket_type: SocketType | None = None
    channel: Channel = "flow"
    multiple: bool = False
    # A secret (a token, a password): encrypted at rest, never sent to the browser, never exported in clear.
    # For key_value parameters the values are secret, the names are not.
    secret: bool = False
    # For a secret sent to a URL: the id of the parameter holding that URL. The secret is sealed for the URL's
    # origin and revealed only for it; changing the URL to another origin clears it (nodeflow_app/secret_values.py).
    secret_for: str = ""
    # For `select` parameters whose options the install provides at run time (e.g. "mcp_servers"): the name
    # of that list; `options` stays empty and the app fills the control.
    choices: str = ""
    # When the parameter applies (n8n's displayOptions.show): parameter id -> the values that show it, every entry
    # must match (e.g. {"mode": ("interval",)}). The named parameter is a constant select or boolean of the same
    # node. A hidden parameter keeps its value (switching back shows it again) but the inspector does not show it,
    # Validate and runs do not check it, and its node does not use it.
    show_if: dict[str, tuple[Any, ...]] = Field(default_factory=dict)
    # A maximum that depends on another parameter of the same node (a select): its id -> {its value: maximum},
    # e.g. {"unit": {"seconds": 3600, "minutes": 60, "hours": 1}}. Validate and runs check it as they check `max`.
    max_by: dict[str, dict[Any, float]] = Field(default_factory=dict)

    @property
    def has_socket(self) -> bool:
        return self.mode != "constant"

    def socket(self) -> Socket:
        """The socket a wired parameter exposes (its id is the parameter id)."""
        return Socket(
            id=self.id, label=self.label,
            type=self.socket_type or PARAMETER_SOCKET_TYPES[self.type],
            channel=self.channel, side="right" if self.mode == "output" else "left",
            required=self.required and self.mode == "input", multiple=self.multiple,
        )


class ParameterMigration(_Strict):
    """Upgrades a node's parameters from `from_version` to `from_version + 1`, as data."""

    from_version: int
    rename: dict[str, str] = Field(default_factory=dict)
    remove: tuple[str, ...] = ()
    add: dict[str, Any] = Field(default_factory=dict)
    note: str = ""

    def apply(self, data: dict[str, Any]) -> dict[str, Any]:
        upgraded = {self.rename.get(k, k): v for k, v in data.items() if k not in self.remove}
        for key, value in self.add.items():
            upgraded.setdefault(key, value)
        return upgraded


class NodeDefinition(_Strict):
    """Everything the editor, the normalizer and the kernel need to know about a node type."""

    id: str = Field(pattern=r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
    version: int = Field(default=1, ge=1)
    name: str
    description: str
    category: str
    icon: str = "box"
    inputs: tuple[Socket, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    outputs: tuple[Socket, ...] = ()
    migrations: tuple[ParameterMigration, ...] = ()
    # A trigger starts runs: it has no flow input and receives the run's payload.
    trigger: bool = False
    # A trigger's example payload (test runs from the editor, docs); None: the trigger needs none.
    example_payload: Any = None
    # Entry points that start runs at this trigger (e.g. "chat": each message sent in the graph's chat).
    started_by: tuple[str, ...] = ()
    # A container runs its child nodes (those whose parentId is this node) itself.
    container: bool = False
    # Nodes with side effects never reuse cached outputs on re-runs.
    side_effects: bool = False

    @model_validator(mode="after")
    def _check(self) -> "NodeDefinition":
        ids = [s.id for s in self.inputs + self.outputs] + [p.id for p in self.parameters]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise ValueError(f"duplicate socket/parameter ids: {sorted(dupes)}")
        expected = list(range(1, self.version))
        if sorted(m.from_version for m in self.migrations) != expected:
            raise ValueError(f"version {self.version} needs migrations from versions {expected}")
        if self.trigger and any(s.channel == "flow" for s in self.inputs):
            raise ValueError("a trigger cannot have flow inputs")
        if not self.trigger and (self.example_payload is not None or self.started_by):
            raise ValueError("only a trigger has an example payload or entry points (started_by)")
        selects = {p.id for p in self.parameters if p.type == "select"}
        for parameter in self.parameters:
            if set(parameter.max_by) - selects:
                raise ValueError(f"parameter '{parameter.id}': max_by names {sorted(set(parameter.max_by) - selects)}, "
                                 f"not a select parameter of this node")
        return self

    def parameter(self, param_id: str) -> Parameter | None:
        return self._parameters_by_id.get(param_id)

    def hidden_parameters(self, data: dict[str, Any]) -> frozenset[str]:
        """The ids of the parameters whose `show_if` the node's `data` does not meet (a missing value is the
        default). A parameter shown only by a hidden one is hidden too."""
        if not self._conditional:
            return frozenset()
        hidden: set[str] = set()
        for parameter in self._conditional:  # definition order; a condition names a parameter declared before it
            if any(key in hidden or data.get(key, self._parameters_by_id[key].default) not in values
                   for key, values in parameter.show_if.items() if key in self._parameters_by_id):
                hidden.add(parameter.id)
        return frozenset(hidden)

    @cached_property
    def bounded_parameters(self) -> tuple[Parameter, ...]:
        """The parameters with a `max_by` (the kernel checks them again when an expression set a value)."""
        return tuple(p for p in self.parameters if p.max_by)

    @cached_property
    def _conditional(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.show_if)

    @cached_property
    def _parameters_by_id(self) -> dict[str, Parameter]:
        return {p.id: p for p in self.parameters}

    def input_sockets(self) -> dict[str, Socket]:
        """Input ports by id: declared inputs plus wired parameters (cached: definitions are frozen)."""
        return self._input_sockets

    @cached_property
    def _input_sockets(self) -> dict[str, Socket]:
        sockets = {s.id: s for s in self.inputs}
        sockets.update({p.id: p.socket() for p in self.parameters if p.mode in ("hybrid", "input")})
        return sockets

    @cached_property
    def _static_outputs(self) -> bool:
        return all(s.repeat is None for s in self.outputs)

    @cached_property
    def _output_sockets(self) -> dict[str, Socket]:
        return self._expand_outputs(None)

    def output_sockets(self, data: dict[str, Any] | None = None, error_output: bool = False) -> dict[str, Socket]:
        """Output ports; `repeat` ports are expanded from the node's `data`."""
        if self._static_outputs and not error_output:
            return self._output_sockets
        sockets = self._expand_outputs(data)
        if error_output:
            sockets = {**sockets, ERROR_HANDLE: Socket(id=ERROR_HANDLE, label="Error", type="data")}
        return sockets

    def _expand_outputs(self, data: dict[str, Any] | None) -> dict[str, Socket]:
        sockets: dict[str, Socket] = {}
        for socket in self.outputs:
            if socket.repeat is None:
                sockets[socket.id] = socket
                continue
            items = (data or {}).get(socket.repeat)
            for index in range(len(items) if isinstance(items, list) else 0):
                port_id = socket.id.format(index=index)
                sockets[port_id] = socket.model_copy(
                    update={"id": port_id, "repeat": None, "label": socket.label.format(index=index)})
        sockets.update({p.id: p.socket() for p in self.parameters if p.mode == "output"})
        return sockets

    def defaults(self) -> dict[str, Any]:
        return {p.id: p.default for p in self.parameters if p.mode != "output"}

    def migrate(self, data: dict[str, Any], from_version: int) -> dict[str, Any]:
        for migration in sorted(self.migrations, key=lambda m: m.from_version):
            if migration.from_version >= from_version:
                data = migration.apply(data)
        return data


Parameter.model_rebuild()

# Parameters every model-calling node shares (definitions are frozen, so one object serves them all).
MODEL_PARAMETER = Parameter(
    id="model", label="Model", type="model", mode="hybrid", channel="link", default="openai:gpt-4o-mini",
    placeholder="provider:model", description="provider:model, or wire a Model Selector.")
TEMPERATURE_PARAMETER = Parameter(
    id="temperature", label="Temperature", type="float", default=None, min=0, max=2, step=0.1,
    description="Empty uses the model's default.")
