/*
 * NodeFlow's chat thread: the message list of a chat with a graph (SPEC 8).
 *
 * Finished messages come whole in `messages` and never change identity until that list changes,
 * so each renders once (React.memo). The answer being streamed (and, once finished, until the next
 * exchange) lives only here: `streamHead` names it, `stream` carries
 * small patch deltas (nodeflow_app/chat/patch.py) that we apply to a local copy, copying only the
 * touched path, so a token re-renders one text block of one message. A gap in `seq` (React may
 * skip intermediate prop values) asks Python for the whole block list with `on_resync`.
 */
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";
import {
  Ban, Check, ChevronDown, ChevronLeft, ChevronRight, CircleAlert, CircleCheck, CircleDashed, CirclePause,
  CircleSlash, CircleX, Copy, FastForward, LoaderCircle, Pencil, RotateCcw, Users, Wrench, Zap,
} from "lucide-react";
import "./chat_thread.css";

const EMPTY_LIST = Object.freeze([]);
const RESYNC_RETRY_MS = 2000; // a lost resync answer is asked for again after this long
const PIN_SLACK_PX = 48;      // "at the bottom" tolerance for auto-scroll
const PENDING_MS = 5000;      // an approval click disables its buttons until the server reacts (or this)
const DUE_GRACE_MS = 1500;   // a timed pause is asked about this long after it is due (the server looks each second)
const MAX_TIMEOUT_MS = 2 ** 31 - 1;  // setTimeout fires at once past this (~24.8 days)
const REMARK_PLUGINS = [remarkGfm];

// ---- Stream deltas --------------------------------------------------------------------------------

/**
 * `blocks` with `ops` applied, or null when an op does not fit (the server must resync us).
 * Props are never mutated: the list and each touched block (and member_run) get new objects.
 */
/** An op as Python sends it (chat.patch.wire_ops): `[path, text]` appends, `[path, block]` sets. */
function fromWire([path, value]) {
  return typeof value === "string" ? { op: "append", path, text: value } : { op: "set", path, block: value };
}

export function applyOps(blocks, ops) {
  if (!ops || ops.length === 0) return blocks;
  const out = blocks.slice();
  const ownMembers = new Set(); // member_run indexes whose nested list is already our copy
  for (const raw of ops) {
    const op = Array.isArray(raw) ? fromWire(raw) : raw;
    const path = op.path ?? [];
    const i = path[0];
    if (path.length === 1) {
      if (op.op === "append") {
        if (!out[i]) return null;
        out[i] = { ...out[i], text: (out[i].text ?? "") + op.text };
      } else {
        if (i > out.length) return null;
        out[i] = op.block;
        ownMembers.delete(i);
      }
    } else if (path.length === 2) {
      let member = out[i];
      if (!member || !Array.isArray(member.blocks)) return null;
      if (!ownMembers.has(i)) {
        member = { ...member, blocks: member.blocks.slice() };
        out[i] = member;
        ownMembers.add(i);
      }
      const j = path[1];
      if (op.op === "append") {
        if (!member.blocks[j]) return null;
        member.blocks[j] = { ...member.blocks[j], text: (member.blocks[j].text ?? "") + op.text };
      } else {
        if (j > member.blocks.length) return null;
        member.blocks[j] = op.block;
      }
    } else {
      return null;
    }
  }
  return out;
}

/** The streaming message as a message object; a new object only when something in it changed. */
function streamedMessage(previous, s, stream) {
  const siblings = stream.siblings ?? EMPTY_LIST;
  const status = stream.status ?? "streaming";
  const index = stream.index ?? 0;
  if (previous && previous.id === s.messageId && previous.blocks === s.blocks && previous.status === status
      && previous.index === index && previous.siblings.join("\n") === siblings.join("\n")) return previous;
  return { id: s.messageId, role: "assistant", status, blocks: s.blocks, siblings, index, run_id: stream.run_id ?? null };
}

/**
 * Follows `stream` (see the contract in nodeflow_app/components/chat_thread.py); returns the streaming
 * message or null. The deltas are applied while rendering, keyed on the prop object's identity, so the
 * finished message and the end of the stream show in the same frame; sending on_resync waits for an effect.
 */
function useStreamedMessage(stream, send) {
  const ref = useRef(null);
  if (ref.current === null) {
    ref.current = { input: undefined, messageId: "", seq: 0, blocks: EMPTY_LIST, message: null,
                    gap: false, resyncAt: 0, resyncs: 0, applied: 0 };
  }
  const s = ref.current;
  if (stream !== s.input) {
    s.input = stream;
    const id = stream?.message_id || "";
    const seq = stream?.seq ?? 0;
    if (!id) {
      Object.assign(s, { messageId: "", seq, blocks: EMPTY_LIST, message: null, gap: false, resyncAt: 0 });
    } else if (id !== s.messageId && stream.blocks == null) {
      // A batch of a message whose start (its blocks) React skipped: its ops have nothing to apply to.
      Object.assign(s, { messageId: id, seq, blocks: EMPTY_LIST, gap: true });
    } else if (id !== s.messageId || stream.blocks != null) {
      const blocks = applyOps(stream.blocks ?? EMPTY_LIST, stream.ops);
      if (blocks === null) Object.assign(s, { messageId: id, seq, blocks: stream.blocks ?? EMPTY_LIST, gap: true });
      else Object.assign(s, { messageId: id, seq, blocks, gap: false, resyncAt: 0, applied: s.applied + 1 });
    } else if (seq === s.seq + 1 && !s.gap) {
      const blocks = applyOps(s.blocks, stream.ops);
      if (blocks === null) s.gap = true;
      else Object.assign(s, { seq, blocks, applied: s.applied + 1 });
    } else if (seq > s.seq + 1) {
      s.gap = true; // keep showing what we have until the whole list comes back
    } // else: an older or repeated value (another var of the state changed): nothing new
    if (id) s.message = streamedMessage(s.message, s, stream);
  }

  useLayoutEffect(() => {
    const probe = window.__nodeflowChat ?? (window.__nodeflowChat = {});
    Object.assign(probe, { messageId: s.messageId, seq: s.seq, resyncs: s.resyncs, applied: s.applied });
    if (!s.gap || !s.messageId) return undefined;
    // One resync per gap; asked again only if its answer has not come after a while (or never comes).
    const ask = () => {
      if (!s.gap || !s.messageId) return;
      s.resyncAt = Date.now();
      s.resyncs += 1;
      probe.resyncs = s.resyncs;
      send("onResync", { message_id: s.messageId });
    };
    const waited = Date.now() - s.resyncAt;
    if (!s.resyncAt || waited >= RESYNC_RETRY_MS) ask();
    const timer = setTimeout(ask, s.resyncAt ? RESYNC_RETRY_MS - (Date.now() - s.resyncAt) : RESYNC_RETRY_MS);
    return () => clearTimeout(timer);
  }, [stream, s, send]);
  useEffect(() => () => { delete window.__nodeflowChat; }, []);
  return s.message;
}

// ---- Small helpers --------------------------------------------------------------------------------

const capitalize = (s) => (s ? s.charAt(0).toUpperCase() + s.slice(1) : "");

function prettyJson(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
  }
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

export function formatDuration(ms) {
  if (ms === null || ms === undefined) return "";
  if (ms < 1) return "<1 ms";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60000);
  return `${minutes} min ${Math.round((ms % 60000) / 1000)} s`;
}

function formatWhen(unixSeconds) {
  if (!unixSeconds) return "";
  const date = new Date(unixSeconds * 1000);
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

const DECIDED = { approve: "Approved", reject: "Rejected" };

/** Lists keep together (their numbering and looseness span blank lines); fences never split. */
const CONTINUES = /^(\s|[-*+>|]|\d+[.)]\s)/;

/**
 * Markdown cut at blank lines between top-level blocks, so a streamed answer re-parses only its
 * last chunk: react-markdown parses the whole string on each change.
 */
export function splitMarkdown(text) {
  const lines = text.split("\n");
  const chunks = [];
  let start = 0, fence = null, blank = false;
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k];
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length) fence = null;
      continue;
    }
    if (blank && line.trim() !== "" && !CONTINUES.test(line) && k > start) {
      chunks.push(lines.slice(start, k).join("\n"));
      start = k;
    }
    if (marker) fence = marker[1];
    blank = line.trim() === "";
  }
  chunks.push(lines.slice(start).join("\n"));
  return chunks;
}

// ---- Markdown -------------------------------------------------------------------------------------

function CopyButton({ getText, label = "Copy" }) {
  const [copied, setCopied] = useState(false);
  const onClick = useCallback(() => {
    const text = getText();
    const done = () => { setCopied(true); setTimeout(() => setCopied(false), 1200); };
    if (navigator.clipboard?.writeText) navigator.clipboard.writeText(text).then(done, () => {});
  }, [getText]);
  return (
    <button type="button" className="nfc-icon-btn nfc-copy" title={copied ? "Copied" : label} aria-label={label} onClick={onClick}>
      {copied ? <Check size={13} /> : <Copy size={13} />}
    </button>
  );
}

/** A fenced code block: language label, copy button, monospace with horizontal scroll. */
function CodeBlock({ children, node: _node, ...rest }) {
  const pre = useRef(null);
  const getText = useCallback(() => pre.current?.textContent ?? "", []);
  const code = Array.isArray(children) ? children[0] : children;
  const language = /language-([\w+-]+)/.exec(code?.props?.className ?? "")?.[1] ?? "";
  return (
    <div className="nfc-code">
      <div className="nfc-code-head">
        <span>{language || "code"}</span>
        <CopyButton getText={getText} label="Copy code" />
      </div>
      <pre ref={pre} {...rest}>{children}</pre>
    </div>
  );
}

function Link({ node: _node, ...rest }) {
  return <a {...rest} target="_blank" rel="noreferrer noopener" />;
}

const MD_COMPONENTS = { pre: CodeBlock, a: Link };

const MarkdownChunk = memo(function MarkdownChunk({ text }) {
  return <ReactMarkdown remarkPlugins={REMARK_PLUGINS} components={MD_COMPONENTS}>{text}</ReactMarkdown>;
});

function Markdown({ text }) {
  const chunks = useMemo(() => splitMarkdown(text ?? ""), [text]);
  // Keys by position: a finished chunk keeps its text, so memo skips it while the last one grows.
  return <div className="nfc-md">{chunks.map((chunk, k) => <MarkdownChunk key={k} text={chunk} />)}</div>;
}

// ---- Blocks ---------------------------------------------------------------------------------------

const Spinner = ({ size = 13 }) => <LoaderCircle size={size} className="nfc-spin" aria-label="running" />;

const STATUS_ICONS = {
  running: Spinner,
  completed: ({ size }) => <CircleCheck size={size} />,
  failed: ({ size }) => <CircleX size={size} />,
  cancelled: ({ size }) => <Ban size={size} />,
  skipped: ({ size }) => <CircleSlash size={size} />,
  paused: ({ size }) => <CirclePause size={size} />,
};

function StatusIcon({ status, size = 14 }) {
  const Icon = STATUS_ICONS[status] ?? (({ size: s }) => <CircleDashed size={s} />);
  return <span className={`nfc-status-icon nfc-s-${status}`} title={status}><Icon size={size} /></span>;
}

const TextBlock = memo(function TextBlock({ block, user }) {
  if (user) return <div className="nfc-bubble" data-testid="block-text">{block.text}</div>;
  return <div className="nfc-text" data-testid="block-text"><Markdown text={block.text} /></div>;
});

const ReasoningBlock = memo(function ReasoningBlock({ block, active }) {
  return (
    <details className="nfc-reasoning" data-testid="block-reasoning">
      <summary>
        <ChevronRight size={13} className="nfc-chevron" />
        Reasoning{active && <Spinner size={12} />}
      </summary>
      <div className="nfc-reasoning-text">{block.text}</div>
    </details>
  );
});

function JsonSection({ label, value, error }) {
  const text = prettyJson(value);
  if (!text) return null;
  return (
    <div className={`nfc-json${error ? " nfc-json-error" : ""}`}>
      <div className="nfc-json-label">{label}</div>
      <pre>{text}</pre>
    </div>
  );
}

const ToolCallBlock = memo(function ToolCallBlock({ block }) {
  const hasError = block.error !== null && block.error !== undefined && block.error !== "";
  return (
    <details className={`nfc-card nfc-tool nfc-b-${block.status}`} data-testid="block-tool" data-status={block.status}>
      <summary className="nfc-card-head">
        <Wrench size={13} className="nfc-muted-icon" />
        <span className="nfc-card-title nfc-mono">{block.name || "tool"}</span>
        <StatusIcon status={block.status} size={13} />
        <span className="nfc-grow" />
        <ChevronDown size={14} className="nfc-chevron" />
      </summary>
      <div className="nfc-card-body">
        <JsonSection label="Arguments" value={block.arguments} />
        {hasError ? <JsonSection label="Error" value={block.error} error /> : <JsonSection label="Result" value={block.result} />}
      </div>
    </details>
  );
});

const ErrorBlock = memo(function ErrorBlock({ block }) {
  return (
    <div className="nfc-card nfc-error" data-testid="block-error" role="alert">
      <div className="nfc-card-head">
        <CircleAlert size={14} />
        <span className="nfc-card-title">{block.node_name ? `${block.node_name} failed` : "Run failed"}</span>
      </div>
      {block.message && <div className="nfc-error-message">{block.message}</div>}
    </div>
  );
});

const MemberRunBlock = memo(function MemberRunBlock({ block, streaming }) {
  const nested = block.blocks ?? EMPTY_LIST;
  return (
    <div className={`nfc-card nfc-member nfc-b-${block.status}`} data-testid="block-member" data-status={block.status}>
      <div className="nfc-card-head">
        <Users size={13} className="nfc-muted-icon" />
        <span className="nfc-card-title">{block.member}</span>
        <StatusIcon status={block.status} size={13} />
      </div>
      {nested.length > 0 && (
        <div className="nfc-member-body">
          {nested.map((b, j) => (
            <BlockView key={j} block={b} active={streaming && block.status === "running" && j === nested.length - 1} />
          ))}
        </div>
      )}
    </div>
  );
});

/** A node's row; its `text` is what it streamed when that is not the answer (a draft an Approval checks first). */
const FlowStep = memo(function FlowStep({ block }) {
  const [open, setOpen] = useState(false);
  const toggle = useCallback(() => setOpen((o) => !o), []);
  const text = block.text ?? "";
  const expandable = !!block.detail || !!text;
  const summary = block.summary || oneLine(text);
  return (
    <div className={`nfc-step nfc-b-${block.status}${open ? " nfc-open" : ""}`}
      data-testid={`step-${block.node_name}`} data-status={block.status} data-node={block.node_id}>
      <button type="button" className="nfc-step-row" onClick={expandable ? toggle : undefined}
        aria-expanded={expandable ? open : undefined} disabled={!expandable}>
        <StatusIcon status={block.status} size={14} />
        <span className="nfc-step-name">{block.node_name}</span>
        <span className="nfc-step-type">{block.node_type}</span>
        <span className="nfc-step-summary" title={summary}>{summary}</span>
        {block.cached && <span className="nfc-badge nfc-cached" title="Output reused from the cache"><Zap size={10} />cached</span>}
        {block.duration_ms != null && <span className="nfc-step-time">{formatDuration(block.duration_ms)}</span>}
        {expandable && <ChevronDown size={13} className="nfc-chevron" />}
      </button>
      {block.child_run_url && (
        <a className="nfc-step-link" href={block.child_run_url} data-testid="open-child-run">Open child run</a>
      )}
      {open && text && <div className="nfc-step-text" data-testid="step-text"><Markdown text={text} /></div>}
      {open && block.detail && <pre className="nfc-step-detail">{prettyJson(block.detail)}</pre>}
    </div>
  );
});

/** The start of a text on one line (a running step's summary while it streams). */
function oneLine(text) {
  return text.slice(0, 200).replace(/\s+/g, " ").trim();
}

/** A question while the decision is open ("Approve “Pay invoice”?"), the decision once made; a timed pause (a long
 * Wait) waits, then goes on. */
function approvalTitle(block) {
  const name = block.node_name ? `“${block.node_name}”` : "this step";
  const subject = `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
  if (block.resume_at != null) return block.decision == null ? `${subject} waits` : `${subject} went on`;
  if (block.decision == null) return `Approve ${name}?`;
  const done = DECIDED[block.decision];
  return done ? `${subject} was ${done.toLowerCase()}` : `${subject}: ${capitalize(block.decision)}`;
}

const ApprovalCard = memo(function ApprovalCard({ block, ctx }) {
  const [note, setNote] = useState("");
  const [pending, setPending] = useState(false);
  const decided = block.decision != null;
  // A click waits for the server to resume the run: `busy` or the status moves (or the timer ends).
  useEffect(() => { setPending(false); }, [ctx.busy, ctx.status, block.decision]);
  useEffect(() => {
    if (!pending) return undefined;
    const timer = setTimeout(() => setPending(false), PENDING_MS);
    return () => clearTimeout(timer);
  }, [pending]);
  // A timed pause: when it is due the server resumes it; the chat asks for the answer as it goes on then.
  useEffect(() => {
    if (decided || block.resume_at == null) return undefined;
    const wait = block.resume_at * 1000 - Date.now() + DUE_GRACE_MS;
    if (wait > MAX_TIMEOUT_MS) return undefined;  // weeks away: a later visit loads the answer anyway
    const timer = setTimeout(() => ctx.send("onDue", { message_id: ctx.messageId }), Math.max(wait, 0));
    return () => clearTimeout(timer);
  }, [decided, block.resume_at, ctx]);
  const disabled = ctx.busy || ctx.status !== "paused" || pending;
  const decide = useCallback((option) => {
    setPending(true);
    ctx.send("onApprove", { message_id: ctx.messageId, node_id: block.node_id, decision: option, note: note.trim() });
  }, [ctx, block.node_id, note]);

  return (
    <div className={`nfc-card nfc-approval${decided ? " nfc-decided" : ""}`} data-testid="approval-card"
      data-node={block.node_id} data-decision={block.decision ?? ""}>
      <div className="nfc-card-head">
        <CirclePause size={14} className="nfc-approval-icon" />
        <span className="nfc-card-title" data-testid="approval-title" title={approvalTitle(block)}>
          {approvalTitle(block)}
        </span>
      </div>
      <div className="nfc-card-body">
        <div className="nfc-approval-prompt">{block.prompt}</div>
        {block.text ? (
          // What is approved, as text (a draft answer); the whole input only on demand.
          <>
            <div className="nfc-approval-text" data-testid="approval-text"><Markdown text={block.text} /></div>
            {block.detail != null && (
              <details className="nfc-approval-more">
                <summary>Whole input <ChevronDown size={12} className="nfc-chevron" /></summary>
                <pre className="nfc-approval-detail">{prettyJson(block.detail)}</pre>
              </details>
            )}
          </>
        ) : block.detail != null && <pre className="nfc-approval-detail">{prettyJson(block.detail)}</pre>}
        {decided ? (
          <div className="nfc-approval-result">
            <div className={`nfc-decision nfc-decision-${block.decision}`}>
              {block.decision === "reject" ? <CircleX size={14} /> : <CircleCheck size={14} />}
              <span>
                {DECIDED[block.decision] ?? capitalize(block.decision)}
                {block.decided_by ? ` by ${block.decided_by}` : ""}
                {block.decided_at ? ` · ${formatWhen(block.decided_at)}` : ""}
              </span>
            </div>
            {block.note && <div className="nfc-approval-note-text">“{block.note}”</div>}
          </div>
        ) : (
          <>
            <textarea className="nfc-input" data-testid="approval-note" rows={2} placeholder="Add a note (optional)"
              value={note} onChange={(e) => setNote(e.target.value)} disabled={disabled} />
            <div className="nfc-approval-actions">
              {(block.options ?? []).map((option) => (
                <button key={option} type="button" data-testid={`approval-${option}`} disabled={disabled}
                  className={`nfc-btn ${option === "reject" ? "nfc-btn-danger" : option === "approve" ? "nfc-btn-primary" : ""}`}
                  onClick={() => decide(option)}>
                  {capitalize(option)}
                </button>
              ))}
            </div>
          </>
        )}
      </div>
    </div>
  );
});

/** One block by type; `active` marks the block tokens are flowing into. */
function BlockView({ block, user, active, ctx }) {
  switch (block.type) {
    case "text": return <TextBlock block={block} user={user} />;
    case "reasoning": return <ReasoningBlock block={block} active={active} />;
    case "tool_call": return <ToolCallBlock block={block} />;
    case "member_run": return <MemberRunBlock block={block} streaming={active} />;
    case "flow_step": return <FlowStep block={block} />;
    case "approval": return <ApprovalCard block={block} ctx={ctx} />;
    case "error": return <ErrorBlock block={block} />;
    default: return null;
  }
}

/** Blocks in order; consecutive flow steps share one bordered list so a run reads as a timeline. */
function Blocks({ blocks, user, streaming, ctx }) {
  const groups = []; // a block index, or an array of flow step indexes
  blocks.forEach((block, i) => {
    const last = groups[groups.length - 1];
    if (block.type !== "flow_step") groups.push(i);
    else if (Array.isArray(last)) last.push(i);
    else groups.push([i]);
  });
  return groups.map((group) => {
    if (Array.isArray(group)) {
      return (
        <div className="nfc-steps" key={`steps-${group[0]}`}>
          {group.map((i) => <FlowStep key={i} block={blocks[i]} />)}
        </div>
      );
    }
    const block = blocks[group];
    const active = streaming && (group === blocks.length - 1 || block.type === "member_run");
    return <BlockView key={group} block={block} user={user} active={active} ctx={ctx} />;
  });
}

// ---- Message ----------------------------------------------------------------------------------------

const STATUS_BADGES = {
  stopped: ["Stopped", "nfc-badge-gray"],
  failed: ["Failed", "nfc-badge-red"],
  paused: ["Waiting for approval", "nfc-badge-amber"],
};

function BranchArrows({ message, send }) {
  const siblings = message.siblings ?? EMPTY_LIST;
  if (siblings.length < 2) return null;
  const index = message.index ?? Math.max(0, siblings.indexOf(message.id));
  const go = (k) => send("onBranch", { message_id: siblings[k] });
  return (
    <span className="nfc-branch">
      <button type="button" className="nfc-icon-btn" data-testid="branch-prev" title="Previous version" aria-label="Previous version"
        disabled={index <= 0} onClick={() => go(index - 1)}><ChevronLeft size={14} /></button>
      <span className="nfc-branch-label" data-testid="branch-label">{index + 1}/{siblings.length}</span>
      <button type="button" className="nfc-icon-btn" data-testid="branch-next" title="Next version" aria-label="Next version"
        disabled={index >= siblings.length - 1} onClick={() => go(index + 1)}><ChevronRight size={14} /></button>
    </span>
  );
}

function UserEditor({ message, busy, send, onClose }) {
  const original = message.blocks.filter((b) => b.type === "text").map((b) => b.text).join("\n");
  const [text, setText] = useState(original);
  const area = useRef(null);
  useEffect(() => { area.current?.focus(); area.current?.setSelectionRange(text.length, text.length); }, []); // eslint-disable-line react-hooks/exhaustive-deps
  const canSend = !busy && text.trim() !== "";
  const submit = () => {
    if (!canSend) return;
    send("onEdit", { message_id: message.id, text });
    onClose();
  };
  const onKeyDown = (e) => {
    if (e.key === "Escape") { e.preventDefault(); onClose(); }
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); submit(); }
  };
  return (
    <div className="nfc-edit">
      <textarea ref={area} className="nfc-input" data-testid="edit-text" value={text} rows={Math.min(12, Math.max(2, text.split("\n").length))}
        onChange={(e) => setText(e.target.value)} onKeyDown={onKeyDown} />
      <div className="nfc-edit-actions">
        <button type="button" className="nfc-btn" data-testid="edit-cancel" onClick={onClose}>Cancel</button>
        <button type="button" className="nfc-btn nfc-btn-primary" data-testid="edit-send" disabled={!canSend} onClick={submit}>
          Save &amp; send
        </button>
      </div>
    </div>
  );
}

function hasText(blocks) {
  return blocks.some((b) => (b.type === "text" || b.type === "reasoning") && b.text);
}

const Message = memo(function Message({ message, isLast, busy, streaming, send }) {
  const [editing, setEditing] = useState(false);
  const closeEditor = useCallback(() => setEditing(false), []);
  const user = message.role === "user";
  const blocks = message.blocks ?? EMPTY_LIST;
  const ctx = useMemo(() => ({ messageId: message.id, status: message.status, busy, send }),
    [message.id, message.status, busy, send]);
  const badge = !user && STATUS_BADGES[message.status];
  // Continue asks the graph to go on after an answer that was cut off (stopped); a finished answer needs none.
  const canContinue = !user && !streaming && isLast && message.status === "stopped";

  return (
    <div className={`nfc-message nfc-${user ? "user" : "assistant"}`} data-testid="chat-message" data-role={message.role}
      data-status={message.status} data-id={message.id} data-streaming={streaming ? "true" : undefined}>
      {editing ? (
        <UserEditor message={message} busy={busy} send={send} onClose={closeEditor} />
      ) : (
        <div className="nfc-blocks">
          <Blocks blocks={blocks} user={user} streaming={streaming} ctx={ctx} />
          {streaming && !hasText(blocks) && <TypingDots />}
        </div>
      )}
      {!editing && (
        <div className="nfc-footer">
          {badge && <span className={`nfc-badge ${badge[1]}`}>{badge[0]}</span>}
          {user && (
            <button type="button" className="nfc-icon-btn" data-testid="edit" title="Edit" aria-label="Edit" disabled={busy}
              onClick={() => setEditing(true)}><Pencil size={13} /></button>
          )}
          {!user && !streaming && (
            <button type="button" className="nfc-icon-btn" data-testid="retry" title="Retry" aria-label="Retry" disabled={busy}
              onClick={() => send("onRetry", { message_id: message.id })}><RotateCcw size={13} /></button>
          )}
          <BranchArrows message={message} send={send} />
          {canContinue && (
            <button type="button" className="nfc-btn nfc-btn-small" data-testid="continue" disabled={busy}
              title="This answer was stopped: send “Continue” so the graph goes on from here"
              onClick={() => send("onContinue", { message_id: message.id })}><FastForward size={12} />Continue</button>
          )}
        </div>
      )}
    </div>
  );
});

function TypingDots() {
  return <div className="nfc-typing" aria-label="Answer on its way"><span /><span /><span /></div>;
}

// ---- Scroll -------------------------------------------------------------------------------------------

/** Keeps the list scrolled to the bottom as content grows, but only while the user is there. */
function useStickToBottom(scroller, content) {
  const pinned = useRef(true);
  const lastTop = useRef(0);
  // Only a move up unpins: the scroll event of our own jump may come after more content arrived.
  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    if (el.scrollHeight - el.scrollTop - el.clientHeight <= PIN_SLACK_PX) pinned.current = true;
    else if (el.scrollTop < lastTop.current) pinned.current = false;
    lastTop.current = el.scrollTop;
  }, [scroller]);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !content.current || typeof ResizeObserver === "undefined") return undefined;
    el.scrollTop = el.scrollHeight;
    const observer = new ResizeObserver(() => { if (pinned.current) el.scrollTop = el.scrollHeight; });
    observer.observe(content.current);
    return () => observer.disconnect();
  }, [scroller, content]);
  return { pinned, onScroll };
}

// ---- The thread -----------------------------------------------------------------------------------------

export function ChatThread(props) {
  const { id, className, style, busy = false } = props;
  const messages = Array.isArray(props.messages) ? props.messages : EMPTY_LIST;

  // Reflex hands new callback props on renders; memoised messages need one stable sender.
  const latest = useRef(props);
  latest.current = props;
  const send = useCallback((name, payload) => {
    const handler = latest.current[name];
    if (typeof handler === "function") handler(payload);
  }, []);

  // The head (id, status, siblings) changes twice per answer, the deltas every batch: one object for the hook.
  const { streamHead, stream: delta } = props;
  const stream = useMemo(() => (streamHead && delta ? { ...streamHead, ...delta } : delta), [streamHead, delta]);
  const streamed = useStreamedMessage(stream, send);

  // The streaming answer replaces its finished copy if the list still holds one (a resumed paused answer).
  const rows = useMemo(() => {
    if (!streamed) return messages;
    const at = messages.findIndex((m) => m.id === streamed.id);
    if (at < 0) return [...messages, streamed];
    const copy = messages.slice();
    copy[at] = streamed;
    return copy;
  }, [messages, streamed]);

  const scroller = useRef(null);
  const content = useRef(null);
  const { pinned, onScroll } = useStickToBottom(scroller, content);
  // Sending a message scrolls to it even when the user had scrolled up.
  const lastId = rows.length ? rows[rows.length - 1].id : "";
  const lastRole = rows.length ? rows[rows.length - 1].role : "";
  useLayoutEffect(() => {
    if (lastRole === "user" && scroller.current) {
      pinned.current = true;
      scroller.current.scrollTop = scroller.current.scrollHeight;
    }
  }, [lastId, lastRole, pinned]);

  const passthrough = Object.fromEntries(Object.entries(props).filter(([k]) => k.startsWith("data-")));
  return (
    <div id={id} ref={scroller} className={`nfc-thread${className ? ` ${className}` : ""}`} style={style}
      onScroll={onScroll} {...passthrough}>
      <div ref={content} className="nfc-thread-inner">
        {rows.map((m, k) => (
          <Message key={m.id} message={m} isLast={k === rows.length - 1} busy={!!busy}
            streaming={m === streamed && m.status === "streaming"} send={send} />
        ))}
      </div>
    </div>
  );
}
