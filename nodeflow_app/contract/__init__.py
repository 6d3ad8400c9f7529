"""The contract between NodeFlow and its nodes: definitions (pure data), events, results, context.

The kernel and every node folder depend on this package; it depends on nothing else of NodeFlow.
"""

from nodeflow_app.contract.context import FlowContext, NodeError, NodeExecutor, RuntimeApi
from nodeflow_app.contract.definitions import (
    ERROR_HANDLE, MODEL_PARAMETER, PARAMETER_SOCKET_TYPES, TEMPERATURE_PARAMETER, Channel, DataValue,
    ErrorMode, NodeDefinition, Option, Parameter, ParameterMigration, ParameterMode, ParameterType, Side,
    Socket, SocketType,
)
from nodeflow_app.contract.events import EventType, NodeEvent
from nodeflow_app.contract.results import ExecutionResult, WaitForInput

__all__ = [
    "ERROR_HANDLE", "MODEL_PARAMETER", "PARAMETER_SOCKET_TYPES", "TEMPERATURE_PARAMETER", "Channel",
    "DataValue", "ErrorMode", "EventType", "ExecutionResult", "FlowContext", "NodeDefinition", "NodeError",
    "NodeEvent", "NodeExecutor", "Option", "Parameter", "ParameterMigration", "ParameterMode",
    "ParameterType", "RuntimeApi", "Side", "Socket", "SocketType", "WaitForInput",
]
