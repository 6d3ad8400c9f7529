"""`nodeflow remote ...`: the CLI against a running NodeFlow server, over its HTTP API with an API token.

The server's URL and the token come from `--url` / `--token`, else NODEFLOW_URL / NODEFLOW_TOKEN (the
environment keeps the token out of the process list). `run` streams the run's server-sent events and
exits like `nodeflow run`: 0 completed, 1 failed or cancelled, 3 paused.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from typing import Any

import httpx

RUN_EXIT = {"completed": 0, "failed": 1, "cancelled": 1, "interrupted": 1, "paused": 3}


class RemoteError(Exception):
    """The server refused or cannot be reached; the message says why."""


def arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    graphs = actions.add_parser("graphs", help="the graphs of the token's workspace")
    run = actions.add_parser("run", help="run a graph on the server, printing its events as they happen")
    run.add_argument("graph", metavar="GRAPH_ID", help="the graph's id (see `nodeflow remote graphs`)")
    run.add_argument("--input", metavar="JSON", help="the trigger's payload (JSON, else plain text)")
    run.add_argument("--trigger", metavar="NODE", help="the trigger (id or name) when the graph has several")
    run.add_argument("--json", action="store_true", help="one JSON object per event")
    get = actions.add_parser("get", help="a run's status and every node's record, as JSON")
    get.add_argument("run_id", metavar="RUN_ID")
    for action in (graphs, run, get):
        action.add_argument("--url", default=os.environ.get("NODEFLOW_URL", "http://localhost:3000"),
                            help="the server (default: $NODEFLOW_URL or %(default)s)")
        action.add_argument("--token", default=os.environ.get("NODEFLOW_TOKEN"),
                            help="an API token of the workspace (default: $NODEFLOW_TOKEN)")


def main(args: argparse.Namespace, payload: Any = None) -> int:
    if not args.token:
        raise RemoteError("an API token is needed: --token or NODEFLOW_TOKEN (create one on the workspace page)")
    headers = {"authorization": f"Bearer {args.token}"}
    try:
        with httpx.Client(base_url=args.url.rstrip("/"), headers=headers, timeout=httpx.Timeout(30, read=None)) as client:
            if args.action == "graphs":
                return _graphs(client)
            if args.action == "get":
                print(json.dumps(_json(client.get(f"/api/v1/runs/{args.run_id}")), indent=2, ensure_ascii=False))
                return 0
            return _run(client, args, payload)
    except httpx.HTTPError as error:
        raise RemoteError(f"cannot reach {args.url}: {error}") from None


def _graphs(client: httpx.Client) -> int:
    graphs = _json(client.get("/api/v1/graphs"))
    width = max([len(g["id"]) for g in graphs] + [2])
    print(f"{'ID'.ljust(width)}  NAME")
    for graph in graphs:
        print(f"{graph['id'].ljust(width)}  {graph['name']}")
    return 0


def _run(client: httpx.Client, args: argparse.Namespace, payload: Any) -> int:
    body = {"input": payload, "trigger": args.trigger, "mode": "stream"}
    with client.stream("POST", f"/api/v1/graphs/{args.graph}/runs", json=body) as response:
        if response.status_code >= 400:
            response.read()
            _json(response)
        end: dict[str, Any] = {}
        for name, data in _events(response.iter_lines()):
            if name == "run":
                print(json.dumps(data) if args.json else f"run {data['run_id']}", flush=True)
            elif name == "node":
                line = json.dumps(data, ensure_ascii=False) if args.json else _node_line(data)
                if line:
                    print(line, flush=True)
            elif name == "end":
                end = data
    print(json.dumps({"event_type": f"run_{end.get('status')}", "run_id": end.get("run_id"),
                      "error": end.get("error"), "output": end.get("output")}, ensure_ascii=False, default=str))
    return RUN_EXIT.get(end.get("status"), 1)


def _events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """(event name, decoded data) of each server-sent event."""
    name, data = "message", []
    for line in lines:
        if not line:
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def _node_line(event: dict[str, Any]) -> str:
    """A line for the events a person follows; tokens and progress are left to --json."""
    kind, data = event["event_type"], event.get("data") or {}
    if kind in ("completed", "skipped", "cancelled"):
        return f"{event['node_id']}: {kind}"
    if kind == "error":
        return f"{event['node_id']}: error: {data.get('error')}"
    if kind == "paused":
        return f"{event['node_id']}: paused: {data.get('prompt', '')}"
    return ""


def _json(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail")
        except ValueError:
            detail = response.text[:200]
        raise RemoteError(f"the server answered {response.status_code}: {detail}")
    return response.json()
