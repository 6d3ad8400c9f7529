"""The contract between NodeFlow and its nodes: definitions (pure data), events, results, context.

The kernel and every node folder depend on this package; it depends on nothing else of NodeFlow.
"""

from nodeflow_app.contract.context import (
    CONVERSATION, STARTED_BY, FlowContext, NodeError, NodeExecutor, RuntimeApi, enter_node, running_node,
)
from nodeflow_app.contract.definitions import (
    ERROR_HANDLE, ERROR_MODES, MODEL_PARAMETER, PARAMETER_SOCKET_TYPES, PARAMETER_TYPES, SOCKET_TYPES,
    TEMPERATURE_PARAMETER, Channel, DataValue, ErrorMode, NodeDefinition, Option, Parameter, ParameterMigration, ParameterMode, ParameterType, Side,
    Socket, SocketType,
)
from nodeflow_app.contract.events import EventType, NodeEvent
from nodeflow_app.contract.results import ExecutionResult, WaitForInput

__all__ = [
    "CONVERSATION", "ERROR_HANDLE", "ERROR_MODES", "MODEL_PARAMETER", "PARAMETER_SOCKET_TYPES",
    "PARAMETER_TYPES", "SOCKET_TYPES", "TEMPERATURE_PARAMETER", "Channel",
    "DataValue", "ErrorMode", "EventType", "ExecutionResult", "FlowContext", "NodeDefinition", "NodeError",
    "NodeEvent", "NodeExecutor", "Option", "Parameter", "ParameterMigration", "ParameterMode",
    "ParameterType", "RuntimeApi", "STARTED_BY", "Side", "Socket", "SocketType", "WaitForInput", "enter_node",
    "running_node",
]
