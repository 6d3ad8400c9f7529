/*
 * NodeFlow's graph canvas: React Flow with node bodies generated from the definitions catalog.
 *
 * The protocol with Python is docs/editor.md. The canvas owns every high-frequency interaction
 * (drag, pan, zoom, selection) in local React Flow state; Python gets committed changes only and
 * answers with small patches, so the graph never travels whole after a load.
 */
import { createContext, memo, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import {
  Background, BackgroundVariant, ConnectionMode, ControlButton, Controls, Handle, MiniMap, Position, ReactFlow,
  ReactFlowProvider, ViewportPortal, applyEdgeChanges, applyNodeChanges, useConnection, useNodeId, useReactFlow,
  useStore, useUpdateNodeInternals,
} from "@xyflow/react";
import { MapIcon } from "lucide-react";
import { dynamicIconImports } from "lucide-react/dynamic.mjs";
import "./flow_canvas.css";

const NODE_MIME = "application/nodeflow-node";
const AUTOSAVE_MS = 1000;
const EMPTY = Object.freeze({});
const EMPTY_FLOW = { nodes: [], edges: [] };
const FIT = { padding: 0.15, maxZoom: 1.2 };
const DELETE_KEYS = ["Delete", "Backspace"];
const FALLBACK_SOCKET = { color: "#6b7280", shape: "circle", dashed: false };
const CanvasContext = createContext(null);

// ---- Graph format <-> React Flow --------------------------------------------------------------

const staticLayouts = new WeakMap(); // definition -> layout, for nodes whose ports never vary

function repeatLabel(label, index) {
  return label.includes("{index}") ? label.replaceAll("{index}", index) : `${label} ${index}`;
}

/** Whether a parameter applies to the node's data: its `show_if` met (a missing value is the default), and the
 * parameters it names shown too, as NodeDefinition.hidden_parameters reads it. */
function paramShown(def, param, data, depth = 0) {
  return Object.entries(param.show_if ?? {}).every(([key, values]) => {
    const named = def.parameters.find((p) => p.id === key);
    if (!named) return true;
    const value = data?.[key] === undefined ? named.default : data[key];
    return values.includes(value) && (depth > 16 || paramShown(def, named, data, depth + 1));
  });
}

/** The node's ports and parameter rows: repeat outputs expanded, the error output when asked for. */
function nodeLayout(def, node, errorHandle) {
  if (!def) return { inputs: [], outputs: [], params: [], ports: {}, handleKey: "" };
  const errorOutput = node.settings?.error_mode === "error_output";
  const varies = errorOutput || def.outputs.some((s) => s.repeat);
  if (!varies && staticLayouts.has(def)) return staticLayouts.get(def);
  const outputs = [];
  for (const socket of def.outputs) {
    if (!socket.repeat) { outputs.push(socket); continue; }
    const items = node.data?.[socket.repeat];
    for (let i = 0; i < (Array.isArray(items) ? items.length : 0); i++) {
      outputs.push({ ...socket, id: socket.id.replaceAll("{index}", i), label: repeatLabel(socket.label, i), repeat: null });
    }
  }
  for (const p of def.parameters) {
    if (p.mode === "output" && p.socket && !outputs.some((s) => s.id === p.id)) outputs.push({ id: p.id, label: p.label, ...p.socket });
  }
  if (errorOutput) outputs.push({ id: errorHandle, label: "Error", type: "data", channel: "flow", error: true });
  const params = def.parameters
    .filter((p) => p.mode === "hybrid" || p.mode === "input")
    .map((p) => ({ param: p, socket: { id: p.id, label: p.label, ...(p.socket ?? { type: "any", channel: "flow" }) } }));
  const ports = {};
  for (const s of [...def.inputs, ...params.map((r) => r.socket), ...outputs]) ports[s.id] = { type: s.type, channel: s.channel };
  const layout = { inputs: def.inputs, outputs, params, ports, handleKey: outputs.map((s) => s.id).join("|") };
  if (!varies) staticLayouts.set(def, layout);
  return layout;
}

/** A React Flow node for a graph node; keeps what React Flow owns (selection, size, a drag in progress). */
function toFlowNode(node, conv, wired, previous) {
  const def = conv.types[node.type];
  const flowNode = {
    id: node.id,
    type: def?.container ? "frame" : "nodeflow",
    position: previous?.dragging ? previous.position : { x: node.position?.x ?? 0, y: node.position?.y ?? 0 },
    data: {
      node, def, layout: nodeLayout(def, node, conv.errorHandle), wired: wired ?? EMPTY,
      issue: conv.issues[node.id] ?? null, status: conv.statuses[node.id] ?? null, pinned: conv.pinned[node.id] ?? null,
      error: conv.errors[node.id] ?? null, peer: conv.peers?.[node.id] ?? null,
    },
  };
  if (node.parentId) flowNode.parentId = node.parentId;
  if (previous) {
    for (const key of ["selected", "measured", "dragging", "width", "height"]) {
      if (previous[key] !== undefined) flowNode[key] = previous[key];
    }
  }
  return flowNode;
}

function toFlowEdge(edge, conv) {
  const channel = edge.data?.channel ?? "flow";
  const type = edge.data?.sourceType;
  const color = type && type !== "data" ? conv.sockets[type]?.color : undefined;
  return withTaken({
    id: edge.id, source: edge.source, sourceHandle: edge.sourceHandle, target: edge.target,
    targetHandle: edge.targetHandle, data: edge.data, className: `nf-edge nf-edge-${channel}`,
    style: color ? { stroke: color } : undefined,
  }, isTaken(edge, conv.statuses, conv.ports));
}

/** Data went along this edge in the run shown: its source completed and gave its source handle a value. */
function isTaken(edge, statuses, ports) {
  return statuses[edge.source] === "completed" && !!ports[edge.source]?.includes(edge.sourceHandle);
}

function withTaken(edge, taken) {
  if (!!edge.animated === taken) return edge;
  const base = edge.className.replace(" nf-edge-taken", "");
  return { ...edge, animated: taken, className: taken ? `${base} nf-edge-taken` : base };
}

/** Mark the edges of the run shown, replacing only the edges that changed (same array when none did). */
function withTakenEdges(flow, statuses, ports) {
  let changed = false;
  const edges = flow.edges.map((e) => {
    const next = withTaken(e, isTaken(e, statuses, ports));
    changed ||= next !== e;
    return next;
  });
  return changed ? { ...flow, edges } : flow;
}

/** Back to the graph format (clipboard): the local position is the current one. */
const graphNode = (n) => ({ ...n.data.node, position: { x: n.position.x, y: n.position.y } });
const graphEdge = (e) => ({
  id: e.id, source: e.source, sourceHandle: e.sourceHandle, target: e.target, targetHandle: e.targetHandle, data: e.data,
});

/** node id -> {handle id: true} of wired target handles, for the given nodes (all when `only` is null). */
function wiredByNode(edges, only) {
  const wired = new Map();
  for (const e of edges) {
    if (only && !only.has(e.target)) continue;
    if (!wired.has(e.target)) wired.set(e.target, {});
    wired.get(e.target)[e.targetHandle] = true;
  }
  return wired;
}

function sameKeys(a, b) {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}

/** React Flow wants a parent before its children; a child whose parent is missing stands alone. */
function orderParents(nodes) {
  if (!nodes.some((n) => n.parentId)) return nodes;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const placed = new Set();
  const ordered = [];
  const place = (n) => {
    if (placed.has(n.id)) return;
    placed.add(n.id);
    if (!n.parentId) { ordered.push(n); return; }
    if (!byId.has(n.parentId)) { ordered.push({ ...n, parentId: undefined }); return; }
    place(byId.get(n.parentId));
    ordered.push(n);
  };
  nodes.forEach(place);
  return ordered;
}

/** A whole graph (load or resync): nodes that stay keep their React Flow state. */
function loadGraph(prev, graph, conv) {
  const previous = new Map(prev.nodes.map((n) => [n.id, n]));
  const edges = (graph.edges ?? []).map((e) => toFlowEdge(e, conv));
  const wired = wiredByNode(edges, null);
  const nodes = (graph.nodes ?? []).map((n) => toFlowNode(n, conv, wired.get(n.id), previous.get(n.id)));
  return { nodes: withFrames(orderParents(nodes)), edges };
}

/** Apply one patch's ops in order; only the nodes and edges they touch get new objects. */
function applyOps(prev, ops, conv) {
  let nodes = prev.nodes.slice();
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const edges = new Map(prev.edges.map((e) => [e.id, e]));
  const touched = new Set(); // target nodes whose wired handles may have changed
  let removed = false, parented = false, selection = null;
  for (const op of ops) {
    if (op.op === "add_node" || op.op === "update_node") {
      const i = index.get(op.node.id);
      const old = i === undefined ? undefined : nodes[i];
      const fresh = toFlowNode(op.node, conv, old?.data.wired, old);
      parented ||= !!fresh.parentId;
      if (i !== undefined) nodes[i] = fresh;
      else { index.set(fresh.id, nodes.length); nodes.push(fresh); touched.add(fresh.id); }
    } else if (op.op === "remove_node" && index.has(op.id)) {
      nodes[index.get(op.id)] = null;
      index.delete(op.id);
      removed = true;
    } else if (op.op === "add_edge") {
      edges.set(op.edge.id, toFlowEdge(op.edge, conv));
      touched.add(op.edge.target);
    } else if (op.op === "remove_edge" && edges.has(op.id)) {
      touched.add(edges.get(op.id).target);
      edges.delete(op.id);
    } else if (op.op === "select") {
      selection = new Set(op.ids);
    }
  }
  if (removed) {
    nodes = nodes.filter(Boolean);
    index.clear();
    nodes.forEach((n, i) => index.set(n.id, i));
    for (const [id, e] of edges) if (!index.has(e.source) || !index.has(e.target)) { edges.delete(id); touched.add(e.target); }
  }
  // Same array when no edge changed: React Flow re-adopts all edges whenever the array is new.
  const edgesChanged = edges.size !== prev.edges.length || ops.some((op) => op.op === "add_edge" || op.op === "remove_edge");
  let edgeList = edgesChanged ? [...edges.values()] : prev.edges;
  const wired = wiredByNode(edgeList, touched);
  for (const id of touched) {
    const i = index.get(id);
    if (i === undefined) continue;
    const n = nodes[i], now = wired.get(id) ?? EMPTY;
    if (!sameKeys(n.data.wired, now)) nodes[i] = { ...n, data: { ...n.data, wired: now } };
  }
  if (selection) {
    nodes = nodes.map((n) => (selection.has(n.id) === !!n.selected ? n : { ...n, selected: selection.has(n.id) }));
    if (edgeList.some((e) => e.selected)) edgeList = edgeList.map((e) => (e.selected ? { ...e, selected: false } : e));
  }
  return { nodes: withFrames(parented || removed ? orderParents(nodes) : nodes), edges: edgeList };
}

/** Set `data[key]` from a {node id: value} map, replacing only the nodes whose value changed. */
function withNodeValues(flow, key, values) {
  let changed = false;
  const nodes = flow.nodes.map((n) => {
    const value = values[n.id] ?? null;
    if (n.data[key] === value) return n;
    changed = true;
    return { ...n, data: { ...n.data, [key]: value } };
  });
  return changed ? { ...flow, nodes } : flow;
}

// ---- Which handles accept the wire being dragged ------------------------------------------------

let lastFrom = null, lastDrag = null;
/** The dragged socket (direction, channel, type), the same object for the whole drag. */
function selectDrag(connection) {
  if (!connection.inProgress) return null;
  const from = connection.fromHandle;
  if (from !== lastFrom) {
    lastFrom = from;
    const port = connection.fromNode?.data?.layout?.ports?.[from.id] ?? { type: "any", channel: "flow" };
    lastDrag = { dir: from.type, nodeId: from.nodeId, handleId: from.id, ...port };
  }
  return lastDrag;
}

function accepts(drag, kind, socket, coercions) {
  if (kind === drag.dir || socket.channel !== drag.channel) return false;
  const [src, tgt] = drag.dir === "source" ? [drag.type, socket.type] : [socket.type, drag.type];
  return src === tgt || src === "any" || tgt === "any" || coercions.has(`${src}>${tgt}`);
}

// ---- Node body ----------------------------------------------------------------------------------

const iconComponents = new Map(), iconLoads = new Map();
function loadIcon(name) {
  if (!iconLoads.has(name)) {
    iconLoads.set(name, dynamicIconImports[name]().then((mod) => { iconComponents.set(name, mod.default); return mod.default; }));
  }
  return iconLoads.get(name);
}

/** Lucide icon by name; loaded once per name and shared by every node of that type. */
function NodeIcon({ name }) {
  const key = (name ?? "").toLowerCase().replaceAll("_", "-");
  const icon = Object.hasOwn(dynamicIconImports, key) ? key : "box";
  const [Icon, setIcon] = useState(() => iconComponents.get(icon) ?? null);
  useEffect(() => {
    let live = true;
    if (!Icon) loadIcon(icon).then((C) => live && setIcon(() => C)).catch(() => {});
    return () => { live = false; };
  }, [icon, Icon]);
  return <span className="nf-icon">{Icon ? <Icon size={14} strokeWidth={2} /> : null}</span>;
}

/** A typed socket: color/shape from the catalog; lights up or dims while a wire is dragged. */
const SocketHandle = memo(function SocketHandle({ socket, kind }) {
  const { sockets, coercions } = useContext(CanvasContext);
  const nodeId = useNodeId();
  const drag = useConnection(selectDrag);
  const look = sockets[socket.type] ?? FALLBACK_SOCKET;
  let state = "";
  if (drag && !(drag.nodeId === nodeId && drag.handleId === socket.id && drag.dir === kind)) {
    state = accepts(drag, kind, socket, coercions) ? " nf-compatible" : " nf-incompatible";
  }
  const className = `nf-socket nf-shape-${look.shape}${look.dashed ? " nf-dashed" : ""}`
    + `${socket.channel === "link" ? " nf-link" : ""}${socket.type === "data" ? " nf-spine" : ""}${state}`;
  return (
    <Handle id={socket.id} type={kind} position={kind === "target" ? Position.Left : Position.Right}
      className={className} style={{ "--nf-sock": look.color }} data-socket-type={socket.type}
      data-channel={socket.channel} title={`${socket.label}: ${socket.type}${socket.channel === "link" ? " (link)" : ""}`} />
  );
});

/** Text edited locally; committed on blur or Enter (Ctrl/Cmd+Enter in a textarea), Escape reverts. */
function TextControl({ value, multiline, normalize, onCommit, ...attrs }) {
  const text = value == null ? "" : typeof value === "string" ? value : JSON.stringify(value);
  const [draft, setDraft] = useState(text);
  const cancelled = useRef(false);
  useEffect(() => setDraft(text), [text]);
  const onBlur = () => {
    const next = cancelled.current ? text : normalize ? normalize(draft, text) : draft;
    cancelled.current = false;
    if (next !== draft) setDraft(next);
    if (next !== text) onCommit(next);
  };
  const onKeyDown = (e) => {
    if (e.key === "Escape") { cancelled.current = true; e.currentTarget.blur(); }
    if (e.key === "Enter" && (!multiline || e.ctrlKey || e.metaKey)) { e.preventDefault(); e.currentTarget.blur(); }
  };
  const Tag = multiline ? "textarea" : "input";
  return <Tag className="nf-input nodrag nowheel" value={draft} rows={multiline ? 2 : undefined}
    onChange={(e) => setDraft(e.target.value)} onBlur={onBlur} onKeyDown={onKeyDown} {...attrs} />;
}

/** Number within the parameter's bounds; empty means null (the node's default). */
function NumberControl({ value, param, onCommit, ...attrs }) {
  const normalize = (raw, previous) => {
    if (raw.trim() === "") return "";
    let n = Number(raw);
    if (!Number.isFinite(n)) return previous;
    if (param.type === "int") n = Math.round(n);
    if (param.min != null) n = Math.max(param.min, n);
    if (param.max != null) n = Math.min(param.max, n);
    return String(n);
  };
  return (
    <TextControl value={value == null ? "" : String(value)} type="number" min={param.min ?? undefined}
      max={param.max ?? undefined} step={param.step ?? (param.type === "int" ? 1 : "any")} {...attrs}
      normalize={normalize} onCommit={(text) => onCommit(text === "" ? null : Number(text))} />
  );
}

const sameValue = (a, b) => a === b || JSON.stringify(a) === JSON.stringify(b);

function SelectControl({ value, param, onCommit, ...attrs }) {
  const options = param.options ?? [];
  const index = options.findIndex((o) => sameValue(o.value, value));
  return (
    <select className="nf-input nodrag" value={index < 0 ? "" : String(index)} {...attrs}
      onChange={(e) => { const o = options[Number(e.target.value)]; if (o) onCommit(o.value); }}>
      {index < 0 && <option value="">—</option>}
      {options.map((o, i) => <option key={i} value={String(i)}>{o.label}</option>)}
    </select>
  );
}

/** One line for values edited in the inspector (json, key_value, list, model, code). */
function summarize(value) {
  if (value == null || value === "") return "—";
  if (typeof value === "string") return value.split("\n")[0].slice(0, 60);
  if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? "" : "s"}`;
  if (typeof value === "object") {
    const keys = Object.keys(value);
    // Invalid JSON kept as typed in the inspector (runtime/graph.py `invalid_json`): say so, not its envelope.
    if (keys.length === 1 && typeof value["$invalid_json"] === "string") {
      return `invalid JSON: ${value["$invalid_json"].split("\n")[0].slice(0, 40)}`;
    }
    return keys.length ? `{${keys.slice(0, 3).join(", ")}${keys.length > 3 ? ", …" : ""}}` : "{}";
  }
  return String(value);
}

function InlineControl({ nodeId, nodeName, param, value, wired }) {
  const { send, readOnly } = useContext(CanvasContext);
  const current = value === undefined ? param.default : value;
  const onCommit = (v) => send("onParameter", { id: nodeId, parameter: param.id, value: v });
  const attrs = {
    "data-testid": `inline-${nodeName}-${param.id}`, disabled: wired || readOnly,
    title: wired ? `${param.label} comes from a wire` : param.label,
  };
  const placeholder = param.placeholder || undefined;
  switch (param.type) {
    case "string": return <TextControl value={current} placeholder={placeholder} onCommit={onCommit} {...attrs} />;
    case "text": return <TextControl value={current} placeholder={placeholder} multiline onCommit={onCommit} {...attrs} />;
    case "int": case "float": return <NumberControl value={current} param={param} onCommit={onCommit} {...attrs} />;
    case "select": return <SelectControl value={current} param={param} onCommit={onCommit} {...attrs} />;
    case "boolean":
      return <input type="checkbox" className="nf-check nodrag" checked={!!current}
        onChange={(e) => onCommit(e.target.checked)} {...attrs} />;
    default: {
      const text = summarize(current);
      return <span className="nf-summary" data-testid={attrs["data-testid"]} title={text}>{text}</span>;
    }
  }
}

/** A hybrid or input parameter: a typed socket on the left, and for hybrid the inline control. */
function ParameterRow({ nodeId, nodeName, row, value, wired }) {
  const { param, socket } = row;
  // A textarea goes under its label; every other control sits beside it.
  const stacked = param.mode === "hybrid" && param.type === "text";
  return (
    <div className={`nf-row nf-param${wired ? " nf-wired" : ""}${stacked ? " nf-stacked" : ""}`}>
      <SocketHandle socket={socket} kind="target" />
      <span className="nf-label">{param.label}{wired && <em className="nf-wired-tag">wired</em>}</span>
      {param.mode === "hybrid" && <InlineControl nodeId={nodeId} nodeName={nodeName} param={param} value={value} wired={wired} />}
    </div>
  );
}

/** Inputs on the left, outputs on the right, side by side. */
function PortRows({ inputs, outputs }) {
  const rows = [];
  for (let i = 0; i < Math.max(inputs.length, outputs.length); i++) {
    const input = inputs[i], output = outputs[i];
    rows.push(
      <div className="nf-row nf-ports" key={i}>
        <span className="nf-port-in">{input && <><SocketHandle socket={input} kind="target" />{input.label}</>}</span>
        <span className={`nf-port-out${output?.error ? " nf-error-port" : ""}`}>
          {output && <>{output.label}<SocketHandle socket={output} kind="source" /></>}
        </span>
      </div>,
    );
  }
  return rows;
}

/** React Flow measures handles at mount; a node whose outputs change must be re-measured. */
function useRemeasure(id, handleKey) {
  const update = useUpdateNodeInternals();
  const seen = useRef(handleKey);
  useEffect(() => {
    if (seen.current !== handleKey) { seen.current = handleKey; update(id); }
  }, [id, handleKey, update]);
}

/** One node, drawn from its definition. Re-renders only when its own data object changes. */
const NodeBody = memo(function NodeBody({ id, data }) {
  const { node, def, layout, wired, issue, status, pinned, error, peer } = data;
  const { send } = useContext(CanvasContext);
  // A parameter row the node's settings hide is left out, unless a wire ends on it (its value stays stored).
  const params = layout.params.filter((row) => wired[row.param.id] || paramShown(def, row.param, node.data));
  useRemeasure(id, `${layout.handleKey}|${params.map((row) => row.param.id).join("|")}`);
  const runTo = (e) => { e.stopPropagation(); send("onRunTo", { id }); };
  const className = `nf-node${issue ? " nf-has-issue" : ""}${status ? ` nf-status-${status}` : ""}${def ? "" : " nf-unknown"}`;
  return (
    <div className={`${className}${peer ? " nf-peer-selected" : ""}`} data-testid={`node-${node.name}`} title={issue ?? undefined}
      data-peer={peer?.initials} style={{ "--nf-color": def?.color ?? FALLBACK_SOCKET.color, "--nf-peer": peer?.color }}>
      <div className="nf-header">
        <NodeIcon name={def?.icon} />
        <span className="nf-title">{node.name}</span>
        {def && def.name !== node.name && <span className="nf-type">{def.name}</span>}
        {pinned && <span className="nf-pin" data-testid={`pinned-${node.name}`} title="Output pinned: test runs use it">{PIN_ICON}</span>}
        {status && <span className={`nf-badge nf-badge-${status}`} data-testid={`status-${node.name}`}
          title={error ?? status}>{STATUS_ICONS[status]}<span className="nf-sr">{status}</span></span>}
        <button type="button" className="nf-run-to nodrag" data-testid={`run-to-${node.name}`} title="Run to here"
          aria-label={`Run to ${node.name}`} onClick={runTo}>{PLAY_ICON}</button>
      </div>
      {error && status === "failed" && (
        <div className="nf-error" data-testid={`error-${node.name}`} title={error}>{error}</div>
      )}
      {def ? (
        <div className="nf-body">
          <PortRows inputs={layout.inputs} outputs={layout.outputs} />
          {params.map((row) => (
            <ParameterRow key={row.param.id} nodeId={id} nodeName={node.name} row={row}
              value={node.data?.[row.param.id]} wired={!!wired[row.param.id]} />
          ))}
        </div>
      ) : <div className="nf-row nf-muted">Unknown node type {node.type}</div>}
    </div>
  );
}, (a, b) => a.data === b.data);

// ---- Container frames ---------------------------------------------------------------------------
// A container (For Each, Loop) is drawn as a frame around its children: its card at the top left,
// the frame grown to enclose every child (positions are relative to the container). Dropping a
// node in a frame makes it a child; dropping it outside its frame takes it out (on_move parentId).

const FRAME_PAD = 24;      // px of frame beyond the right and bottom of the last child
const FRAME_CHILD = { width: 220, height: 80 }; // a child's size before React Flow has measured it

/** The frame size each container needs (`data.frame`); the same array when no frame changed. */
function withFrames(nodes) {
  if (!nodes.some((n) => n.type === "frame")) return nodes;
  const dragging = nodes.some((n) => n.dragging);
  const extents = new Map(); // container id -> {width, height} its children reach
  for (const n of nodes) {
    if (!n.parentId || n.dragging) continue; // a dragged node may be on its way out: the frame stays put
    const size = n.measured?.width ? n.measured : FRAME_CHILD;
    const reach = extents.get(n.parentId) ?? { width: 0, height: 0 };
    reach.width = Math.max(reach.width, Math.ceil(n.position.x + size.width + FRAME_PAD));
    reach.height = Math.max(reach.height, Math.ceil(n.position.y + size.height + FRAME_PAD));
    extents.set(n.parentId, reach);
  }
  let changed = false;
  const framed = nodes.map((n) => {
    if (n.type !== "frame") return n;
    let frame = extents.get(n.id) ?? null;
    const before = n.data.frame ?? null;
    if (dragging && before) { // while dragging, frames only grow (no jumping under the pointer)
      frame = { width: Math.max(before.width, frame?.width ?? 0), height: Math.max(before.height, frame?.height ?? 0) };
    }
    if (before === frame || (before && frame && before.width === frame.width && before.height === frame.height)) return n;
    changed = true;
    return { ...n, data: { ...n.data, frame } };
  });
  return changed ? framed : nodes;
}

/** A container node: its usual card inside a frame sized to its children (or a drop area when empty). */
const FrameBody = memo(function FrameBody(props) {
  const { node, frame } = props.data;
  return (
    <div className={`nf-frame${frame ? "" : " nf-frame-empty"}`} data-testid={`frame-${node.name}`}
      style={frame ? { minWidth: frame.width, minHeight: frame.height } : undefined}>
      <NodeBody {...props} />
      {!frame && <div className="nf-frame-hint">Drag steps here</div>}
    </div>
  );
}, (a, b) => a.data === b.data);

/** Absolute rectangle of a node as React Flow last laid it out. */
function absoluteRect(rf, id) {
  const internal = rf.getInternalNode(id);
  if (!internal) return null;
  const { x, y } = internal.internals.positionAbsolute;
  return { x, y, width: internal.measured?.width ?? FRAME_CHILD.width, height: internal.measured?.height ?? FRAME_CHILD.height };
}

/** The innermost container whose frame holds `point`, skipping `node` and everything inside it. */
function containerAt(rf, point, nodeId) {
  const all = rf.getNodes();
  const parentOf = new Map(all.map((n) => [n.id, n.parentId]));
  const inside = (id, ancestor) => { for (let p = id; p; p = parentOf.get(p)) if (p === ancestor) return true; return false; };
  let best = null, bestDepth = -1;
  for (const n of all) {
    if (n.type !== "frame" || inside(n.id, nodeId)) continue;
    const r = absoluteRect(rf, n.id);
    if (!r || point.x < r.x || point.x > r.x + r.width || point.y < r.y || point.y > r.y + r.height) continue;
    let depth = 0;
    for (let p = parentOf.get(n.id); p; p = parentOf.get(p)) depth++;
    if (depth > bestDepth) { best = n; bestDepth = depth; }
  }
  return best;
}

/** Add `parentId` (and a position relative to it) to the moves of nodes dropped into or out of a frame. */
function withContainerDrops(rf, root, dragged, moves) {
  const draggedIds = new Set(dragged.map((n) => n.id));
  for (const n of dragged) {
    if (n.parentId && draggedIds.has(n.parentId)) continue; // it travels with its container
    const rect = absoluteRect(rf, n.id);
    if (!rect) continue;
    const target = containerAt(rf, { x: rect.x + rect.width / 2, y: rect.y + rect.height / 2 }, n.id);
    const parentId = target?.id ?? null;
    if (parentId === (n.parentId ?? null)) continue;
    let position = { x: rect.x, y: rect.y };
    if (target) {
      const frame = absoluteRect(rf, target.id);
      // Below the container's own card, so the child never covers it.
      const card = root?.querySelector(`.react-flow__node[data-id="${CSS.escape(target.id)}"] .nf-node`);
      const top = (card?.offsetHeight ?? 0) + 16;
      position = { x: Math.max(16, rect.x - frame.x), y: Math.max(top, rect.y - frame.y) };
    }
    const move = { id: n.id, position, parentId };
    const i = moves.findIndex((m) => m.id === n.id);
    if (i >= 0) moves[i] = move; else moves.push(move);
  }
}

// ---- Node types ----------------------------------------------------------------------------------

const NODE_TYPES = { nodeflow: NodeBody, frame: FrameBody };
// A run's status on a node's header as a small icon (the border has its color): the word would take the room of
// the node's name ("Re…"). The word stays in the tooltip and for screen readers.
const statusIcon = (d) => (
  <svg width="10" height="10" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="3.5" strokeLinecap="round"
    strokeLinejoin="round" aria-hidden="true"><path d={d} /></svg>
);
const STATUS_ICONS = {
  running: statusIcon("M12 3a9 9 0 1 0 9 9"), completed: statusIcon("M4 12.5l5 5L20 6.5"),
  failed: statusIcon("M6 6l12 12M18 6L6 18"), paused: statusIcon("M8 5v14M16 5v14"),
  skipped: statusIcon("M5 12h14"), cancelled: statusIcon("M5 12h14"), interrupted: statusIcon("M12 4v10M12 20v.5"),
};
const PLAY_ICON = <svg width="12" height="12" viewBox="0 0 24 24" fill="currentColor"><path d="M7 4v16l13-8z" /></svg>;
const PIN_ICON = (
  <svg width="12" height="12" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round"
    strokeLinejoin="round"><path d="M12 17v5M9 10.76V6h6v4.76l2 3.24H7z M8 2h8" /></svg>
);
const miniMapColor = (n) => n.data?.def?.color ?? FALLBACK_SOCKET.color;

const MINIMAP_KEY = "nodeflow.minimap"; // "hidden" once a person hid it: kept for every graph, in this browser

function storedMinimap() {
  try { return window.localStorage.getItem(MINIMAP_KEY) !== "hidden"; } catch { return true; } // storage off
}

/** Whether the minimap is shown, and its toggle (the zoom buttons' last one); the choice outlives the page. */
function useMinimapChoice() {
  const [shown, setShown] = useState(storedMinimap);
  const toggle = useCallback(() => setShown((was) => {
    try { window.localStorage.setItem(MINIMAP_KEY, was ? "hidden" : "shown"); } catch { /* kept for this page */ }
    return !was;
  }), []);
  return [shown, toggle];
}

// ---- Hooks --------------------------------------------------------------------------------------

/** Reflex rebuilds literal props (the catalog) on every render: keep one object per content. */
function useStableJson(value) {
  const ref = useRef({ json: undefined, value: undefined, stable: undefined });
  if (value !== ref.current.value) { // only when the prop object itself changed (not on a drag frame)
    const json = JSON.stringify(value ?? null);
    ref.current = { json, value, stable: json === ref.current.json ? ref.current.stable : value };
  }
  return ref.current.stable;
}

const NOT_TEXT = new Set(["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"]);
const isTextField = (el) => !!el && (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT"
  || (el.tagName === "INPUT" && !NOT_TEXT.has(el.type)));

/** Whether someone else's ops change or delete a node selected here (its inspector must follow). */
function touchesSelected(ops, nodes) {
  const selected = new Set(nodes.filter((n) => n.selected).map((n) => n.id));
  return selected.size > 0 && ops.some((op) => selected.has(op.op === "remove_node" ? op.id : op.node?.id));
}

/**
 * `graph` replaces everything when its rev changes (it holds the room's patches up to its `seq`);
 * the room's `patch` applies in seq order within an epoch. A gap asks Python for the missed patches
 * (`catchup`, or the whole graph when the room no longer has them); a new epoch asks for the graph.
 */
function useGraphSync(props, setFlow, flowRef, conv, send, rf, selectionKey) {
  const { graph, patch, catchup } = props;
  const sync = useRef({ rev: null, epoch: null, seq: 0, asked: null, fitted: false });
  const apply = (p) => { // one room patch, in order
    const s = sync.current;
    s.seq = p.seq;
    const mine = !p.by || p.by === props.me;
    const ops = mine ? p.ops ?? [] : (p.ops ?? []).filter((op) => op.op !== "select"); // my selection is mine
    // Someone else changed or deleted what this tab inspects: the inspector shows it as it is now (or closes).
    if (!mine && touchesSelected(ops, flowRef.current.nodes)) {
      const who = (props.people ?? []).find((x) => x.id === p.by)?.name;
      send("onRemote", { by: who ?? "" });
    }
    setFlow((prev) => {
      const next = applyOps(prev, ops, conv.current);
      flowRef.current = next;
      // Python already knows the selection a patch leaves: do not echo it back as on_select.
      if (mine) selectionKey.current = selectionKeyOf(selectedIds(next.nodes), selectedIds(next.edges));
      return next;
    });
  };
  const ask = () => { // once per position: the answer moves us on, or the next patch asks again
    const s = sync.current, at = `${s.epoch}:${s.seq}`;
    if (s.asked === at) return;
    s.asked = at;
    send("onResync", { epoch: s.epoch, seq: s.seq });
  };
  const take = (p) => { // the latest room patch: apply it, skip it, or ask for what is missing
    const s = sync.current;
    if (!p || s.rev == null) return;
    if (p.epoch !== s.epoch) { if (p.epoch > s.epoch) ask(); return; }
    if (p.seq <= s.seq) return;
    if (p.seq !== s.seq + 1) { ask(); return; }
    apply(p);
    // Autosave a moment after the last edit of a burst, whoever made it (the room saves once).
    clearTimeout(s.autosave);
    if (!props.readOnly) s.autosave = setTimeout(() => send("onSave", { auto: true }), AUTOSAVE_MS);
  };
  useEffect(() => {
    const s = sync.current;
    if (!graph || graph.rev == null || graph.rev === s.rev) return;
    s.rev = graph.rev;
    // Rev 0 is a fresh server state's default (the server restarted): the graph shown stays until the room's comes.
    if (graph.rev === 0 && flowRef.current.nodes.length) return;
    s.epoch = graph.epoch ?? 0;
    s.seq = graph.seq ?? 0;
    const g = graph.graph ?? EMPTY;
    setFlow((prev) => { const next = loadGraph(prev, g, conv.current); flowRef.current = next; return next; });
    if (!s.fitted && g.nodes?.length) { s.fitted = true; rf.fitView(FIT); }
    // The whole graph comes with each page load, a reconnect's too, which starts this tab's inspector empty: the
    // nodes still selected here are selected there again (their inspector comes back).
    const ids = new Set((g.nodes ?? []).map((n) => n.id));
    const selected = flowRef.current.nodes.filter((n) => n.selected && ids.has(n.id)).map((n) => n.id).sort();
    if (selected.length) { selectionKey.current = selected.join("\n"); send("onSelect", { nodes: selected }); }
    take(patch);
  }, [graph]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => take(patch), [patch]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    const s = sync.current;
    if (!catchup || catchup.epoch !== s.epoch) return;
    for (const [seq, ops] of catchup.patches ?? []) if (seq === s.seq + 1) apply({ seq, ops, by: "" });
    take(patch); // what came meanwhile
  }, [catchup]); // eslint-disable-line react-hooks/exhaustive-deps
  return sync;
}

const selectedIds = (items) => items.filter((x) => x.selected).map((x) => x.id).sort();
/** The selection on_select last told Python (sorted node ids, then edge ids when any): not sent twice. */
const selectionKeyOf = (nodeIds, edgeIds) => (edgeIds.length ? `${nodeIds.join("\n")}|${edgeIds.join("\n")}` : nodeIds.join("\n"));

/** Undo/redo/save/select all/fit view; ignored while typing in a field (except save). */
function useKeyboard(send, rf, setFlow) {
  useEffect(() => {
    const onKeyDown = (e) => {
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      if (mod && key === "s") {
        e.preventDefault();
        if (isTextField(document.activeElement)) document.activeElement.blur(); // commit the field first
        send("onSave", {});
        return;
      }
      if (e.defaultPrevented || e.altKey || isTextField(e.target)) return;
      if (mod && (key === "y" || (key === "z" && e.shiftKey))) { e.preventDefault(); send("onRedo", {}); }
      else if (mod && key === "z") { e.preventDefault(); send("onUndo", {}); }
      else if (mod && key === "a") {
        e.preventDefault();
        setFlow((f) => ({ ...f, nodes: f.nodes.map((n) => (n.selected ? n : { ...n, selected: true })) }));
      } else if (!mod && e.code === "Digit1") rf.fitView(FIT);
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [send, rf, setFlow]);
}

/** Copy/cut put the selected nodes and the edges among them on the clipboard; paste goes to Python. */
function useClipboard(flowRef, send, pastePosition) {
  useEffect(() => {
    const fragment = () => {
      const nodes = flowRef.current.nodes.filter((n) => n.selected);
      if (!nodes.length) return null;
      const ids = new Set(nodes.map((n) => n.id));
      const inside = flowRef.current.edges.filter((e) => ids.has(e.source) && ids.has(e.target));
      return { ids, text: JSON.stringify({ nodeflow: "fragment", nodes: nodes.map(graphNode), edges: inside.map(graphEdge) }) };
    };
    const textSelected = () => !!window.getSelection()?.toString();
    const onCopy = (e, cut) => {
      if (isTextField(document.activeElement) || textSelected() || !e.clipboardData) return;
      const picked = fragment();
      if (!picked) return;
      e.clipboardData.setData("text/plain", picked.text);
      e.preventDefault();
      if (cut) {
        const edges = flowRef.current.edges.filter((x) => picked.ids.has(x.source) || picked.ids.has(x.target));
        send("onDelete", { nodes: [...picked.ids], edges: edges.map((x) => x.id) });
      }
    };
    const copy = (e) => onCopy(e, false), cut = (e) => onCopy(e, true);
    const paste = (e) => {
      if (isTextField(e.target) || isTextField(document.activeElement)) return;
      const text = e.clipboardData?.getData("text/plain");
      if (!text) return;
      e.preventDefault();
      send("onPaste", { text, position: pastePosition(text) });
    };
    document.addEventListener("copy", copy);
    document.addEventListener("cut", cut);
    document.addEventListener("paste", paste);
    return () => {
      document.removeEventListener("copy", copy);
      document.removeEventListener("cut", cut);
      document.removeEventListener("paste", paste);
    };
  }, [flowRef, send, pastePosition]);
}

/**
 * Palette entries are plain Reflex elements: tag their drags so the canvas knows what is dropped, and add a
 * clicked one where `placeNew` says (only the canvas knows its size, the viewport and the nodes' measured sizes).
 */
function usePalette(send, placeNew) {
  useEffect(() => {
    const entryOf = (e) => (e.target instanceof Element ? e.target.closest("[data-node-type]") : null);
    const onDragStart = (e) => {
      const entry = entryOf(e);
      if (!entry || !e.dataTransfer) return;
      e.dataTransfer.setData(NODE_MIME, entry.getAttribute("data-node-type"));
      e.dataTransfer.effectAllowed = "copy";
    };
    const onClick = (e) => {
      const type = entryOf(e)?.getAttribute("data-node-type");
      if (type) send("onAdd", { type, position: placeNew(type) });
    };
    document.addEventListener("dragstart", onDragStart);
    document.addEventListener("click", onClick);
    return () => {
      document.removeEventListener("dragstart", onDragStart);
      document.removeEventListener("click", onClick);
    };
  }, [send, placeNew]);
}

// ---- Where a clicked palette entry lands ---------------------------------------------------------
// As in n8n and Dify: in view, beside the selected node (else the last one), on no other node.

const NEW_GAP = 40; // flow px kept between a new node and the nodes around it
const VIEW_MARGIN = 16; // screen px kept free along the canvas's edges
const SPOT_STEP = 20; // screen px between the spots tried
// A node's size before React Flow has measured it (flow_canvas.css: header, a 28 px row per port pair or
// parameter, a textarea row more than twice that; an empty frame's drop area), rounded up: it must fit there.
const NEW_NODE = { width: 220, header: 52, row: 30, textRow: 66, frameWidth: 300, frameHint: 96 };

function newNodeSize(def) {
  if (!def) return { width: NEW_NODE.width, height: NEW_NODE.header + NEW_NODE.row };
  const data = Object.fromEntries(def.parameters.map((p) => [p.id, p.default]));
  const layout = nodeLayout(def, { data }, "error");
  const height = NEW_NODE.header + Math.max(layout.inputs.length, layout.outputs.length) * NEW_NODE.row
    + layout.params.reduce((sum, r) => sum + (r.param.type === "text" ? NEW_NODE.textRow : NEW_NODE.row), 0);
  return def.container ? { width: NEW_NODE.frameWidth, height: height + NEW_NODE.frameHint } : { width: NEW_NODE.width, height };
}

/** A screen rectangle (DOMRect) in flow coordinates. */
function toFlowRect(rf, r) {
  const a = rf.screenToFlowPosition({ x: r.left, y: r.top }), b = rf.screenToFlowPosition({ x: r.right, y: r.bottom });
  return { x: a.x, y: a.y, width: b.x - a.x, height: b.y - a.y };
}

const overlaps = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** What a new node must not cover (flow coordinates): every node, and the minimap and zoom buttons when shown. */
function takenRects(rf, wrapper) {
  const taken = rf.getNodes().map((n) => absoluteRect(rf, n.id)).filter(Boolean);
  for (const panel of wrapper.querySelectorAll(".react-flow__panel")) {
    const r = panel.getBoundingClientRect();
    if (r.width && r.height) taken.push(toFlowRect(rf, r));
  }
  return taken;
}

/** The spot in `area` nearest `start` where a `size` box (with the gap around it) covers none of `taken`. */
function nearestFree(area, size, start, taken, step) {
  const spots = [];
  for (let x = area.x; x + size.width <= area.x + area.width; x += step) {
    for (let y = area.y; y + size.height <= area.y + area.height; y += step) {
      spots.push({ x, y, d: (x - start.x) ** 2 + (y - start.y) ** 2 });
    }
  }
  spots.sort((a, b) => a.d - b.d);
  const near = taken.filter((r) => overlaps(r, area));
  const box = (s) => ({ x: s.x - NEW_GAP, y: s.y - NEW_GAP, width: size.width + 2 * NEW_GAP, height: size.height + 2 * NEW_GAP });
  const spot = spots.find((s) => !near.some((r) => overlaps(box(s), r)));
  return spot ? { x: spot.x, y: spot.y } : null;
}

/**
 * Where a new node of `def` goes (flow coordinates): the free spot nearest the right of the selected node
 * (else of the last node) when that node is in view, else nearest the middle of the view, wholly inside the
 * visible canvas and off React Flow's minimap and zoom buttons. A full view pans to a free spot next to it.
 */
function placeNewNode(rf, wrapper, def) {
  const bounds = wrapper?.getBoundingClientRect();
  if (!bounds?.width || !bounds?.height) return { x: 0, y: 0 };
  const { zoom } = rf.getViewport();
  const margin = VIEW_MARGIN;
  const view = toFlowRect(rf, new DOMRect(bounds.x + margin, bounds.y + margin, bounds.width - 2 * margin, bounds.height - 2 * margin));
  const size = newNodeSize(def);
  const nodes = rf.getNodes();
  const taken = takenRects(rf, wrapper);
  const anchorNode = nodes.findLast((n) => n.selected) ?? nodes.at(-1);
  const anchor = anchorNode ? absoluteRect(rf, anchorNode.id) : null;
  const start = anchor && overlaps(anchor, view) ? { x: anchor.x + anchor.width + NEW_GAP, y: anchor.y }
    : { x: view.x + (view.width - size.width) / 2, y: view.y + (view.height - size.height) / 2 };
  const step = SPOT_STEP / zoom;
  const spot = nearestFree(view, size, start, taken, step);
  if (spot) return spot;
  const around = { x: view.x - view.width, y: view.y - view.height, width: 3 * view.width, height: 3 * view.height };
  const further = nearestFree(around, size, start, taken, 2 * step);
  if (!further) return start; // no room anywhere near: at least beside the node, overlapping
  rf.setCenter(further.x + size.width / 2, further.y + size.height / 2, { zoom });
  return further;
}

// ---- Where a paste lands -------------------------------------------------------------------------
// As in n8n: the pasted group's top left at the pointer when the pointer is on the canvas, else beside the
// copied nodes (mid-view when they are not in this graph); either way on the nearest spot that covers no node,
// so a copy never lies over its original and a second paste goes beside the first.

/** The box of a clipboard fragment's top-level nodes where they were copied (measured sizes when they are in
 * this graph), and whether they are; null when the text holds no nodes (Python says what is wrong with it). */
function fragmentBox(rf, text, types) {
  let parsed;
  try { parsed = JSON.parse(text); } catch { return null; }
  const nodes = Array.isArray(parsed?.nodes) ? parsed.nodes.filter((n) => n && typeof n === "object") : [];
  const ids = new Set(nodes.map((n) => n.id));
  let left = Infinity, top = Infinity, right = -Infinity, bottom = -Infinity, here = false;
  for (const n of nodes.filter((n) => !ids.has(n.parentId))) {
    const x = Number(n.position?.x) || 0, y = Number(n.position?.y) || 0;
    const own = typeof n.id === "string" ? rf.getInternalNode(n.id) : undefined;
    here ||= !!own;
    const size = own?.measured?.width ? own.measured : newNodeSize(types[n.type]);
    left = Math.min(left, x); top = Math.min(top, y);
    right = Math.max(right, x + size.width); bottom = Math.max(bottom, y + size.height);
  }
  return left === Infinity ? null : { x: left, y: top, width: right - left, height: bottom - top, here };
}

/** Where the pasted group's top left goes (flow coordinates); `pointer`: screen point, null off the canvas. */
function placePaste(rf, wrapper, text, pointer, types) {
  const bounds = wrapper?.getBoundingClientRect();
  const box = fragmentBox(rf, text, types);
  if (!bounds?.width || !bounds?.height) return { x: 0, y: 0 };
  const middle = { x: bounds.left + bounds.width / 2, y: bounds.top + bounds.height / 2 };
  if (!box) return rf.screenToFlowPosition(pointer ?? middle);
  const { zoom } = rf.getViewport();
  const view = toFlowRect(rf, new DOMRect(bounds.x + VIEW_MARGIN, bounds.y + VIEW_MARGIN, bounds.width - 2 * VIEW_MARGIN,
    bounds.height - 2 * VIEW_MARGIN));
  const center = rf.screenToFlowPosition(middle);
  const start = pointer ? rf.screenToFlowPosition(pointer)
    : box.here ? { x: box.x + box.width + NEW_GAP, y: box.y }
    : { x: center.x - box.width / 2, y: center.y - box.height / 2 };
  // A grid of spots through `start` (a whole number of steps from the area's corner): free, it is the spot.
  const step = SPOT_STEP / zoom;
  const reach = Math.ceil(Math.max(view.width, view.height, box.width, box.height) / step) * step;
  const area = { x: start.x - reach, y: start.y - reach, width: 2 * reach + box.width, height: 2 * reach + box.height };
  const spot = nearestFree(area, box, start, takenRects(rf, wrapper), step) ?? start;
  const placed = { ...spot, width: box.width, height: box.height };
  const inView = placed.x >= view.x && placed.y >= view.y && placed.x + placed.width <= view.x + view.width
    && placed.y + placed.height <= view.y + view.height;
  if (!pointer && !inView) rf.setCenter(spot.x + box.width / 2, spot.y + box.height / 2, { zoom });
  return { x: spot.x, y: spot.y };
}

// ---- History: a stored version or two versions compared, read-only ------------------------------
// The `history` prop (state/history_state.py) is {rev, mode: "" | "version" | "diff", graph, marks}.
// While a mode is set the canvas shows that graph in a flow of its own, marks the diff's nodes and
// edges (class nf-diff-added | removed | changed), sends no edit, and leaves the live flow as it was.

// What still reaches Python while History shows a version (an added node too: Python refuses it, saying why).
const HISTORY_SENDS = new Set(["onSave", "onResync", "onAdd"]);
const VIEWER_SENDS = new Set(["onSelect", "onViewport", "onResync", "onCursor", "onRemote", "onLeave"]); // what a viewer's canvas sends

/** The flow History shows instead of the live graph, or null; fitted when it comes and when it goes. */
function useHistoryView(history, conv, rf) {
  const [view, setView] = useState(null);
  const viewRef = useRef(null);
  viewRef.current = view;
  const rev = useRef(null);
  useEffect(() => {
    if (!history || history.rev == null || history.rev === rev.current) return;
    rev.current = history.rev;
    const shown = history.mode && history.graph;
    if (!shown && viewRef.current === null) return; // the live graph already (each page load says so)
    // The live graph's issues belong to it, not to a stored version; a run's statuses mean nothing on a diff.
    const look = { ...conv.current, issues: EMPTY, ...(history.mode === "diff" ? { statuses: EMPTY, ports: EMPTY } : {}) };
    setView(shown ? withDiffMarks(loadGraph(EMPTY_FLOW, history.graph, look), history.marks ?? EMPTY) : null);
    setTimeout(() => rf.fitView(FIT), 80); // once React Flow has measured the nodes
  }, [history]); // eslint-disable-line react-hooks/exhaustive-deps
  return { view, setView, viewRef };
}

function withDiffMarks(flow, marks) {
  const nodeMarks = marks.nodes ?? EMPTY, edgeMarks = marks.edges ?? EMPTY;
  return {
    nodes: flow.nodes.map((n) => (nodeMarks[n.id] ? { ...n, className: `nf-diff-${nodeMarks[n.id]}` } : n)),
    edges: flow.edges.map((e) => (edgeMarks[e.id] ? { ...e, className: `${e.className} nf-diff-${edgeMarks[e.id]}` } : e)),
  };
}

// ---- Presence: other people's selections and cursors ---------------------------------------------
// The room's `people` ([{id, user, name, initials, color, selected}], one per tab) and `cursors` ({id: [x, y]},
// flow coordinates). My own tabs are skipped. A node someone selected gets their colour as an outline.

/** The room's people other than me: not this tab, nor my other tabs (the same `user`). */
function othersOf(people, me) {
  const mine = (people ?? []).find((p) => p.id === me)?.user;
  return (people ?? []).filter((p) => p.id !== me && (!mine || p.user !== mine));
}

/** node id -> {color, initials} of the first other person who has it selected; one object per content. */
function usePeers(people, me) {
  const key = JSON.stringify(othersOf(people, me).map((p) => [p.color, p.initials, p.selected]));
  return useMemo(() => {
    const peers = {};
    for (const [color, initials, selected] of JSON.parse(key)) {
      for (const id of selected ?? []) if (!peers[id]) peers[id] = { color, initials };
    }
    return peers;
  }, [key]);
}

const CURSOR_MS = 50;
/** Sends my pointer in flow coordinates, at most every 50 ms (the last position always goes). */
function useCursorSender(send, rf) {
  const state = useRef({ last: 0, timer: null, pending: undefined });
  return useCallback((screen) => {
    const s = state.current;
    s.pending = screen ? rf.screenToFlowPosition(screen) : null;
    const flush = () => { s.timer = null; s.last = Date.now(); send("onCursor", s.pending ?? {}); };
    if (s.timer) return;
    const wait = CURSOR_MS - (Date.now() - s.last);
    if (wait <= 0) flush(); else s.timer = setTimeout(flush, wait);
  }, [send, rf]);
}

function PeerCursors({ cursors, people, me }) {
  const byId = new Map(othersOf(people, me).map((p) => [p.id, p]));
  const shown = Object.entries(cursors ?? EMPTY).filter(([id]) => byId.has(id));
  return (
    <ViewportPortal>
      {shown.map(([id, [x, y]]) => {
        const p = byId.get(id);
        return (
          <div key={id} className="nf-cursor" data-testid={`cursor-${p.initials}`}
            style={{ transform: `translate(${x}px, ${y}px)`, "--nf-peer": p.color }}>
            <svg width="14" height="18" viewBox="0 0 14 18"><path d="M1 1l12 8-6 1-3 6z" fill={p.color} stroke="#111" /></svg>
            <span>{p.name}</span>
          </div>
        );
      })}
    </ViewportPortal>
  );
}

// ---- The canvas ---------------------------------------------------------------------------------

// Zoomed out this far, a node's text is a few pixels tall: labels stop clipping to an ellipsis (flow_canvas.css).
const FAR_ZOOM = 0.25;
const isFar = (s) => s.transform[2] < FAR_ZOOM;

function Canvas(props) {
  const { id, className, style } = props;
  const definitions = useStableJson(props.definitions) ?? EMPTY;
  const issues = useStableJson(props.issues) ?? EMPTY;
  const statuses = useStableJson(props.statuses) ?? EMPTY;
  const ports = useStableJson(props.ports) ?? EMPTY;
  const pinned = useStableJson(props.pinned) ?? EMPTY;
  const errors = useStableJson(props.errors) ?? EMPTY;
  const rf = useReactFlow();
  const [flow, setFlow] = useState(EMPTY_FLOW);
  const flowRef = useRef(flow);
  flowRef.current = flow;

  // Reflex hands new callback props on renders; React Flow needs stable ones (else it loops).
  const latest = useRef(props);
  latest.current = props;
  const send = useCallback((name, payload) => {
    if (latest.current.history?.mode && !HISTORY_SENDS.has(name)) return; // read-only while History shows a version
    if (latest.current.readOnly && !VIEWER_SENDS.has(name)) return; // a viewer looks, never edits
    const handler = latest.current[name];
    if (typeof handler === "function") handler(payload);
  }, []);

  const conv = useRef(null);
  conv.current = {
    types: definitions.types ?? EMPTY, sockets: definitions.sockets ?? EMPTY,
    errorHandle: definitions.error_handle ?? "error", issues, statuses, ports, pinned, errors,
  };
  const { view, setView, viewRef } = useHistoryView(props.history, conv, rf);
  const readOnly = view !== null || !!props.readOnly;
  const shown = view ?? flow;
  const context = useMemo(() => ({
    sockets: definitions.sockets ?? EMPTY,
    coercions: new Set((definitions.coercions ?? []).map(([s, t]) => `${s}>${t}`)),
    send, readOnly,
  }), [definitions, send, readOnly]);

  const selectionKey = useRef("");
  const peers = usePeers(props.people, props.me);
  conv.current.peers = peers;
  const sync = useGraphSync(props, setFlow, flowRef, conv, send, rf, selectionKey);
  const focusN = useRef(null);
  useEffect(() => { // Python selects nodes in this tab only (the issues list): not a room patch
    const focus = props.focus;
    if (!focus || focus.n === focusN.current) return;
    const first = focusN.current === null;
    focusN.current = focus.n;
    if (first) return;
    selectionKey.current = [...(focus.ids ?? [])].sort().join("\n"); // Python knows it: no on_select echo
    setFlow((prev) => applyOps(prev, [{ op: "select", ids: focus.ids ?? [] }], conv.current));
  }, [props.focus]);
  useEffect(() => setFlow((f) => withNodeValues(f, "peer", peers)), [peers]);
  useEffect(() => setFlow((f) => withNodeValues(f, "issue", issues)), [issues]);
  useEffect(() => setFlow((f) => withNodeValues(f, "status", statuses)), [statuses]);
  useEffect(() => setFlow((f) => withTakenEdges(f, statuses, ports)), [statuses, ports]);
  useEffect(() => setFlow((f) => withNodeValues(f, "pinned", pinned)), [pinned]);
  useEffect(() => setFlow((f) => withNodeValues(f, "error", errors)), [errors]);

  const wrapper = useRef(null);
  const pointer = useRef(null);
  const pastePosition = useCallback((text) => placePaste(rf, wrapper.current, text, pointer.current, conv.current.types), [rf]);
  const placeNew = useCallback((type) => placeNewNode(rf, wrapper.current, conv.current.types[type]), [rf]);
  useKeyboard(send, rf, setFlow);
  useClipboard(flowRef, send, pastePosition);
  usePalette(send, placeNew);

  useEffect(() => {
    const api = {
      nodeCount: () => flowRef.current.nodes.length, edgeCount: () => flowRef.current.edges.length,
      lastSeq: () => sync.current.seq, rev: () => sync.current.rev, epoch: () => sync.current.epoch, fitView: () => rf.fitView(FIT),
      resync: () => send("onResync", {}),
      send, // what a person's gestures send, for tests and benchmarks (Python checks every event)
    };
    window.__nodeflowCanvas = api;
    return () => { if (window.__nodeflowCanvas === api) delete window.__nodeflowCanvas; };
  }, [rf, sync, send]);

  // React Flow's own changes (sizes measured, selection) go to the flow on screen: History's while it shows one.
  const onNodesChange = useCallback((changes) => (viewRef.current ? setView : setFlow)((f) => {
    const nodes = applyNodeChanges(changes, f.nodes);
    return nodes === f.nodes ? f : { ...f, nodes: withFrames(nodes) };
  }), [viewRef, setView]);
  const onEdgesChange = useCallback((changes) => (viewRef.current ? setView : setFlow)((f) => {
    const edges = applyEdgeChanges(changes, f.edges);
    return edges === f.edges ? f : { ...f, edges };
  }), [viewRef, setView]);
  // Connection mode is strict, so React Flow already puts the output side in `source`.
  const onConnect = useCallback(({ source, sourceHandle, target, targetHandle }) => {
    send("onConnect", { source, sourceHandle, target, targetHandle });
  }, [send]);

  const dragStart = useRef(new Map());
  const onDragStart = useCallback((_e, _node, nodes) => {
    dragStart.current = new Map(nodes.map((n) => [n.id, { ...n.position }]));
  }, []);
  const onDragStop = useCallback((_e, _node, nodes) => {
    const moves = nodes
      .filter((n) => { const p = dragStart.current.get(n.id); return !p || p.x !== n.position.x || p.y !== n.position.y; })
      .map((n) => ({ id: n.id, position: { x: n.position.x, y: n.position.y } }));
    dragStart.current = new Map();
    withContainerDrops(rf, wrapper.current, nodes, moves);
    if (moves.length) send("onMove", { moves });
  }, [send, rf]);
  const onSelectionDragStart = useCallback((e, nodes) => onDragStart(e, null, nodes), [onDragStart]);
  const onSelectionDragStop = useCallback((e, nodes) => onDragStop(e, null, nodes), [onDragStop]);

  // Python deletes (and may refuse): nothing is removed locally until its patch arrives.
  const onBeforeDelete = useCallback(async ({ nodes, edges }) => {
    if (nodes.length || edges.length) send("onDelete", { nodes: nodes.map((n) => n.id), edges: edges.map((e) => e.id) });
    return false;
  }, [send]);
  const onSelectionChange = useCallback(({ nodes, edges }) => {
    const ids = nodes.map((n) => n.id).sort();
    const wires = edges.map((e) => e.id).sort();
    const key = selectionKeyOf(ids, wires);
    if (key === selectionKey.current) return;
    selectionKey.current = key;
    send("onSelect", wires.length ? { nodes: ids, edges: wires } : { nodes: ids });
  }, [send]);
  const lastViewport = useRef("");
  const onMoveEnd = useCallback((_e, { x, y, zoom }) => {
    const key = `${x}|${y}|${zoom}`;
    if (key === lastViewport.current) return;
    lastViewport.current = key;
    send("onViewport", { x, y, zoom });
  }, [send]);

  const onDragOver = useCallback((e) => {
    if (!e.dataTransfer.types.includes(NODE_MIME)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
  }, []);
  const onDrop = useCallback((e) => {
    const type = e.dataTransfer.getData(NODE_MIME);
    if (!type) return;
    e.preventDefault();
    send("onAdd", { type, position: rf.screenToFlowPosition({ x: e.clientX, y: e.clientY }) });
  }, [send, rf]);
  const sendCursor = useCursorSender(send, rf);
  const watched = useRef(false); // someone else is in the room: only then is my cursor worth sending
  watched.current = othersOf(props.people, props.me).length > 0;
  const onMouseMove = useCallback((e) => {
    pointer.current = { x: e.clientX, y: e.clientY };
    // Not while a button is down: a drag, pan or wire stays in the browser until it ends (one event).
    if (!e.buttons && watched.current) sendCursor(pointer.current);
  }, [sendCursor]);
  const onMouseLeave = useCallback(() => { pointer.current = null; if (watched.current) sendCursor(null); }, [sendCursor]);
  useEffect(() => {
    const leave = () => send("onLeave", {});
    window.addEventListener("pagehide", leave);
    return () => { window.removeEventListener("pagehide", leave); leave(); };
  }, [send]);
  const passthrough = Object.fromEntries(Object.entries(props).filter(([k]) => k.startsWith("data-")));
  const far = useStore(isFar);
  const [minimapShown, toggleMinimap] = useMinimapChoice();
  const minimapLabel = minimapShown ? "Hide the minimap" : "Show the minimap";

  return (
    <CanvasContext.Provider value={context}>
      <div id={id} ref={wrapper} className={`nf-canvas${readOnly ? " nf-readonly" : ""}${far ? " nf-far" : ""}${className ? ` ${className}` : ""}`} style={style}
        onDragOver={onDragOver} onDrop={onDrop} onMouseMove={onMouseMove} onMouseLeave={onMouseLeave} {...passthrough}>
        <ReactFlow nodes={shown.nodes} edges={shown.edges} nodeTypes={NODE_TYPES} colorMode="dark"
          nodesDraggable={!readOnly} nodesConnectable={!readOnly} elementsSelectable={!readOnly}
          onNodesChange={onNodesChange} onEdgesChange={onEdgesChange} onConnect={onConnect}
          onNodeDragStart={onDragStart} onNodeDragStop={onDragStop}
          onSelectionDragStart={onSelectionDragStart} onSelectionDragStop={onSelectionDragStop}
          onBeforeDelete={onBeforeDelete} onSelectionChange={onSelectionChange} onMoveEnd={onMoveEnd}
          connectionMode={ConnectionMode.Strict} deleteKeyCode={readOnly ? null : DELETE_KEYS} minZoom={0.05} maxZoom={2}>
          <Background variant={BackgroundVariant.Dots} gap={20} size={1.2} color="var(--gray-a6)" />
          {minimapShown && <MiniMap pannable zoomable nodeColor={miniMapColor} nodeStrokeWidth={0} />}
          <Controls showInteractive={false}>
            <ControlButton onClick={toggleMinimap} title={minimapLabel} aria-label={minimapLabel}
              aria-pressed={minimapShown} data-testid="toggle-minimap">
              <MapIcon size={12} strokeWidth={2.5} />
            </ControlButton>
          </Controls>
          <PeerCursors cursors={props.cursors} people={props.people} me={props.me} />
        </ReactFlow>
      </div>
    </CanvasContext.Provider>
  );
}

export function FlowCanvas(props) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}
