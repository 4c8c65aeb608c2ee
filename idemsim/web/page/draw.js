// draw.js — draws one scene (idemsim.views.scene's JSON) as an SVG time-space diagram, in the figures' vocabulary.
// Guarantees:
// - Every word drawn comes from the scene, or from `words` (the page's table, in the scene's language).
// - Lanes top to bottom as scene.lanes gives them; time left to right, one scale for the whole picture.
// - Each drawn message is a <g class="message" data-event="N">: its arrow (or its path to the cross where it was
//   lost) with a wide invisible hit line, so that the centre of its box lies on the message and a click there is
//   a click on it; labels let the pointer through. Only messages carry data-event; every other thing that comes
//   from a trace event carries its index as data-trace (for the page's event panel).
// - `setTime(t)` shows what happened up to simulated time t: later things are faded, a message in flight is drawn
//   up to where it is, with a dot at its head, and a span only up to t. `setTime(Infinity)` shows the whole story.
// - Colours as the figures (Okabe–Ito): green only for an `ok` on a run whose design holds, vermilion for broken,
//   reddish purple (Jepsen's info) for unknown. Labels never overlap each other or a mark: a label that fits
//   nowhere is shortened or left out (its words stay in the element's tooltip); what makes the story (a key
//   record's end, a new purchase on an old key, a pair charged twice) is placed first.

let SVG = null; // the SVG namespace, read from the <svg> drawn into (the page names no address, not even this one)

export const COLOURS = {
  black: "#000000", orange: "#E69F00", sky: "#56B4E9", green: "#009E73", yellow: "#F0E442",
  blue: "#0072B2", vermillion: "#D55E00", purple: "#CC79A7", grey: "#8C8C8C", lane: "#C8C8C8",
  neutral: "#A6A6A6", neutralText: "#3C3C3C",
};
const OUTCOME = { ok: COLOURS.green, fail: COLOURS.vermillion, info: COLOURS.purple };
const OUTCOME_TEXT = { ok: "#007558", fail: "#B34700", info: "#A1487F" };
const KEY_COLOUR = { in_progress: "#F3D7A6", done: "#B9DDF2" };
const BELIEF_COLOUR = { paid: COLOURS.neutral, not_paid: "#D9D9D9", unknown: COLOURS.purple };
const TRACKS = new Set(["belief", "key", "charges", "captures"]);
export const FONT = '"Hiragino Sans", "Noto Sans CJK JP", "Yu Gothic", system-ui, -apple-system, "Segoe UI", sans-serif';

let measurer = null;
/** Width of `s` in user units at `size` (the SVG is drawn at one unit a CSS pixel). */
function textWidth(s, size, weight = "normal") {
  if (!measurer) measurer = document.createElement("canvas").getContext("2d");
  measurer.font = `${weight} ${size}px ${FONT}`;
  return measurer.measureText(s).width;
}

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function title(node, s) {
  if (s) el("title", {}, node).textContent = s;
}

/** When the first thing that breaks the design shows: a duplicate ledger entry (a second charge or capture of one
 * purchase) or a belief that differs from the truth;
 * the end of the run when the design broke in another way; null when it holds. */
export function breakTime(scene) {
  if (scene.verdicts.holds) return null;
  const times = [];
  for (const p of scene.ledger) for (const e of [...p.charges, ...p.captures]) if (e.duplicate) times.push(e.t);
  for (const b of scene.beliefs) for (const s of b.spans) if (s.differs) times.push(s.start);
  return times.length ? Math.min(...times) : scene.end;
}

/** The times at which something happens, sorted, distinct: the steps of the arrow keys. */
export function eventTimes(scene) {
  const ts = new Set([0, scene.end]);
  for (const m of scene.messages) { ts.add(m.sent); ts.add(m.arrived ?? m.lost_at); }
  for (const m of scene.marks) ts.add(m.t);
  for (const s of scene.spans) { ts.add(s.start); ts.add(s.end); }
  for (const k of scene.keys) for (const r of k.records) { ts.add(r.created); if (r.ended) ts.add(r.ended.t); }
  return [...ts].filter((t) => Number.isFinite(t)).sort((a, b) => a - b);
}

/**
 * Draw `scene` into `svg` (emptied first). Options: width (user units = CSS px), fit (the height it should keep
 * within, if it can), compact (a compare panel: the
 * parties only, smaller), words (the page's UI words), onMessage(event) (a click on a message that can be lost),
 * onHandler(laneId, element) (a click on a handler's name), lost(event) → why a message cannot be lost (its
 * tooltip) or null.
 * Returns {setTime(t), end, times}.
 */
export function drawScene(svg, scene, options = {}) {
  const o = { width: 1100, compact: false, words: {}, ...options };
  const w = (key, fallback = key) => o.words[key] ?? fallback;
  const holds = scene.verdicts.holds;
  const outcome = holds ? OUTCOME : { ...OUTCOME, ok: COLOURS.neutral };
  const outcomeText = holds ? OUTCOME_TEXT : { ...OUTCOME_TEXT, ok: COLOURS.neutralText };
  const lanes = o.compact ? scene.lanes.filter((l) => !TRACKS.has(l.role)) : scene.lanes;
  const size = o.compact ? 11 : 13;
  const labelSize = o.compact ? 10.5 : 12;
  // lanes closer together (down to about two thirds) when the picture would be taller than `fit` (the room left)
  const parties = lanes.filter((l) => !TRACKS.has(l.role)).length;
  const tracks = lanes.length - parties;
  const natural = 68 + parties * 44 + tracks * 36;
  const squeeze = o.fit && !o.compact ? Math.min(1, Math.max(0.66, (o.fit - 68) / (natural - 68))) : 1;
  const pitch = o.compact ? 26 : Math.round(44 * squeeze);
  const trackPitch = o.compact ? 22 : Math.round(36 * squeeze);

  // -- geometry --------------------------------------------------------------------------------------------
  const left = Math.min(260, Math.max(90, ...lanes.map((l) => textWidth(l.name, size, "bold") + 24)));
  const right = 16;
  const width = Math.max(o.width, left + 300);
  const end = scene.end > 0 ? scene.end : 1;
  const t0 = -0.03 * end;
  const t1 = end * (o.compact ? 1.06 : 1.12);
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (width - left - right);
  const slots = beliefSlots(scene.beliefs);
  const pairRows = new Set();
  for (const p of scene.ledger) for (const pair of p.pairs) pairRows.add(pair.kind === "charged_twice" ? "charges" : "captures");
  const y = {};
  let depth = o.compact ? 16 : 28;
  lanes.forEach((lane, i) => {
    if (i) depth += TRACKS.has(lane.role) || TRACKS.has(lanes[i - 1].role) ? trackPitch : pitch;
    const rows = lane.role === "belief" ? slots.rows.get(lane.id) || 1 : 1;
    depth += (rows - 1) * 4;
    y[lane.id] = depth;
    depth += (rows - 1) * 4;
    if (pairRows.has(lane.role) && !o.compact) depth += 22;
  });
  const axisY = depth + (o.compact ? 16 : 26);
  const height = axisY + (o.compact ? 18 : 40);

  SVG = svg.namespaceURI;
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("font-family", FONT);
  svg.classList.toggle("compact", o.compact);
  const defs = el("defs", {}, svg);
  const id = `s${Math.random().toString(36).slice(2, 8)}`;
  for (const [name, colour] of [["request", COLOURS.blue], ["response", COLOURS.black], ["processor", COLOURS.orange],
    ["grey", COLOURS.grey], ["wait", "#8A7B00"]]) {
    const marker = el("marker", { id: `${id}-${name}`, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
      markerHeight: 7, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse" }, defs);
    marker.setAttribute("markerWidth", o.compact ? 7 : 10);
    marker.setAttribute("markerHeight", o.compact ? 7 : 10);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: colour }, marker);
  }
  const hatch = el("pattern", { id: `${id}-hatch`, width: 8, height: 8, patternUnits: "userSpaceOnUse",
    patternTransform: "rotate(45)" }, defs);
  el("line", { x1: 0, y1: 0, x2: 0, y2: 8, stroke: COLOURS.vermillion, "stroke-width": 2, opacity: 0.5 }, hatch);
  const hatchKey = el("pattern", { id: `${id}-hatchkey`, width: 6, height: 6, patternUnits: "userSpaceOnUse",
    patternTransform: "rotate(45)" }, defs);
  el("rect", { width: 6, height: 6, fill: KEY_COLOUR.in_progress }, hatchKey);
  el("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#C98A2B", "stroke-width": 1.2 }, hatchKey);

  const layer = (name) => el("g", { class: name }, svg);
  const gLanes = layer("lanes");
  const gBands = layer("bands");
  const gMarks = layer("marks");
  const gMessages = layer("messages"); // above the marks: a message is never hidden under a mark it crosses
  const gNow = layer("now");
  const gLabels = layer("labels");

  const timed = []; // {node, t0, t1?, update?(now)}
  const hold = (node, start, update) => { timed.push({ node, start, update }); return node; };
  const obstacles = []; // boxes [x0, y0, x1, y1] no label covers
  const requests = []; // labels placed at the end, by priority
  const label = (req) => requests.push({ priority: 2, prefer: ["above-right", "below-right", "above", "below"],
    size: labelSize, weight: "normal", colour: "#333", radius: 4, ...req });

  const tagged = (node, event) => {
    if (event !== undefined && event !== null && event >= 0) {
      node.setAttribute("data-trace", event);
      node.classList.add("event");
    }
    return node;
  };

  // -- lanes -----------------------------------------------------------------------------------------------
  for (const lane of lanes) {
    const ly = y[lane.id];
    el("line", { x1: left - 6, x2: width - right, y1: ly, y2: ly, stroke: TRACKS.has(lane.role) ? "#E6E6E6" : COLOURS.lane,
      "stroke-width": 1 }, gLanes);
    const g = el("g", { class: `lane-label role-${lane.role}`, "data-lane": lane.id }, gLanes);
    const t = el("text", { x: left - 12, y: ly + size * 0.35, "text-anchor": "end", "font-size": TRACKS.has(lane.role) ? size - 1 : size,
      "font-weight": TRACKS.has(lane.role) ? "normal" : "bold", fill: TRACKS.has(lane.role) ? "#555" : "#000" }, g);
    t.textContent = lane.name;
    if (lane.role === "handler" && o.onHandler && !o.compact) {
      g.classList.add("handler");
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.setAttribute("aria-haspopup", "menu");
      g.setAttribute("aria-label", `${lane.name}: ${w("crash_here")}`);
      const box = el("rect", { x: 2, y: ly - size, width: left - 10, height: size * 2, fill: "transparent", class: "hit" });
      g.insertBefore(box, t);
      title(g, w("crash_here"));
      const open = () => o.onHandler(lane.id, g);
      g.addEventListener("click", open);
      g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); e.stopPropagation(); open(); } });
    }
  }

  // -- the time axis ---------------------------------------------------------------------------------------
  const axis = el("g", { class: "axis" }, gLanes);
  el("line", { x1: left, x2: width - right, y1: axisY, y2: axisY, stroke: COLOURS.grey }, axis);
  const step = niceStep(end, o.compact ? 5 : 10);
  for (let t = 0; t <= t1 + 1e-9; t += step) {
    el("line", { x1: x(t), x2: x(t), y1: axisY, y2: axisY + 4, stroke: COLOURS.grey }, axis);
    el("text", { x: x(t), y: axisY + 15, "text-anchor": "middle", "font-size": size - 2, fill: "#444" }, axis).textContent =
      `${+t.toFixed(3)}`;
  }
  if (!o.compact) {
    el("text", { x: (left + width) / 2, y: axisY + 33, "text-anchor": "middle", "font-size": size - 1, fill: "#444" }, axis)
      .textContent = w("time");
  }

  // -- spans -----------------------------------------------------------------------------------------------
  const handlerLanes = lanes.filter((l) => l.role === "handler").map((l) => l.id);
  const transactions = new Map(scene.spans.filter((s) => s.kind === "transaction").map((s) => [s.event, s]));
  for (const span of scene.spans) {
    if (span.kind === "down") {
      if (!handlerLanes.length) continue;
      const top = y[handlerLanes[0]] - pitch * 0.4;
      const bottom = y[handlerLanes[handlerLanes.length - 1]] + pitch * 0.4;
      const r = tagged(el("rect", { x: x(span.start), y: top, height: bottom - top, fill: `url(#${id}-hatch)`, class: "span down" }, gBands), span.event);
      grow(r, span);
      continue;
    }
    const ly = y[span.lane];
    if (ly === undefined) continue;
    if (span.kind === "alive") {
      const line = tagged(el("line", { x1: x(span.start), y1: ly, y2: ly, stroke: "#555", "stroke-width": 2.5, class: "span alive" }, gBands), span.event);
      growLine(line, span);
    } else if (span.kind === "attempt") {
      const line = tagged(el("line", { x1: x(span.start), y1: ly, y2: ly, stroke: outcome[span.info.outcome] || COLOURS.grey,
        "stroke-width": o.compact ? 4 : 6, opacity: 0.45, class: "span attempt" }, gBands), span.event);
      growLine(line, span);
    } else if (span.kind === "transaction") {
      const half = o.compact ? 5 : 9;
      const r = tagged(el("rect", { x: x(span.start), y: ly - half, height: 2 * half, fill: COLOURS.sky, opacity: 0.3, class: "span transaction" }, gBands), span.event);
      title(r, "BEGIN … COMMIT");
      grow(r, span);
      if (span.info.end === "rollback" && !o.compact) {
        label({ variants: [w("rollback")], anchor: [x(span.end), ly], colour: "#1F5F8B", priority: 3,
          prefer: ["above-right", "below-right"], start: span.end, event: span.event });
      }
    } else if (span.kind === "processing") {
      const half = o.compact ? 4 : 7;
      const r = tagged(el("rect", { x: x(span.start), y: ly - half, height: 2 * half, fill: COLOURS.orange, opacity: 0.28, class: "span processing" }, gBands), span.event);
      grow(r, span);
    } else if (span.kind === "wait") {
      const half = o.compact ? 4 : 7;
      const g = tagged(el("g", { class: "span wait" }, gMarks), span.event);
      const r = el("rect", { x: x(span.start), y: ly - half, height: 2 * half, fill: COLOURS.yellow, stroke: "#8A7B00", "stroke-width": 1 }, g);
      grow(r, span);
      obstacles.push([x(span.start), ly - half, x(span.end), ly + half]);
      const seconds = w("seconds", "{s} s").replace("{s}", Number(span.info.waited).toFixed(1));
      title(g, span.label ? `${seconds}: ${span.label}` : seconds);
      const release = transactions.get(span.released_by);
      if (release && y[release.lane] !== undefined) {
        const x0 = x(span.end);
        const x1 = x(release.end);
        const y1 = y[release.lane];
        const bend = Math.max(36, Math.abs(y1 - ly) * 0.6);
        const path = el("path", { d: `M${x0},${ly} Q${Math.max(x0, x1) + bend},${(ly + y1) / 2} ${x1},${y1 + (y1 > ly ? -4 : 4)}`,
          fill: "none", stroke: "#8A7B00", "stroke-width": 1.4, "marker-end": `url(#${id}-wait)` }, g);
        hold(path, span.end);
      }
      if (!o.compact) {
        label({ variants: span.label ? [`${seconds}: ${span.label}`, seconds] : [seconds], anchor: [(x(span.start) + x(span.end)) / 2, ly],
          radius: half, weight: "bold", colour: "#5C5200", priority: 0, prefer: ["above", "below"], start: span.start, event: span.event });
      }
    }
  }

  function grow(rect, span) {
    const xs = x(span.start);
    const xe = Math.max(x(span.end), xs + 1);
    rect.setAttribute("width", xe - xs);
    hold(rect, span.start, (now) => rect.setAttribute("width", Math.max(1, Math.min(xe, x(Math.max(now, span.start))) - xs)));
  }

  function growLine(line, span) {
    const xe = x(span.end);
    line.setAttribute("x2", xe);
    hold(line, span.start, (now) => line.setAttribute("x2", Math.min(xe, x(Math.max(now, span.start)))));
  }

  // -- messages --------------------------------------------------------------------------------------------
  const drawn = []; // [x0, x1, yLo, yHi] of each arrow, to nudge one that would lie on another
  const sorted = [...scene.messages].sort((a, b) => a.sent - b.sent || (a.arrived ?? a.lost_at) - (b.arrived ?? b.lost_at));
  for (const m of sorted) {
    const y0 = y[m.src];
    const y1 = y[m.dst];
    if (y0 === undefined || y1 === undefined) continue;
    const lost = m.arrived === null || m.arrived === undefined;
    const tEnd = lost ? m.lost_at : m.arrived;
    let yEnd = y1;
    if (lost) {
      yEnd = (y0 + y1) / 2;
      if (Object.values(y).some((ly) => Math.abs(ly - yEnd) < 6)) yEnd += (y1 > y0 ? 0.5 : -0.5) * pitch;
    }
    let nudge = 0;
    const xa = x(m.sent);
    const xb = x(tEnd);
    const lo = Math.min(y0, yEnd);
    const hi = Math.max(y0, yEnd);
    while (drawn.some(([a, b, l, h]) => Math.abs(a - xa - nudge) < 4 && Math.abs(b - xb - nudge) < 4 && Math.min(hi, h) - Math.max(lo, l) > 2)) nudge += 6;
    drawn.push([xa + nudge, xb + nudge, lo, hi]);
    const ax = xa + nudge;
    const bx = xb + nudge;
    const kind = m.kind.startsWith("processor") ? "processor" : m.kind === "request" ? "request" : m.kind === "response" ? "response" : "grey";
    const colour = m.info && m.info.ignored ? COLOURS.grey : { request: COLOURS.blue, response: COLOURS.black, processor: COLOURS.orange, grey: COLOURS.grey }[kind];
    const g = el("g", { class: `message ${kind}${lost ? " lost" : ""}`, [o.compact ? "data-trace" : "data-event"]: m.event }, gMessages);
    g.classList.add("event");
    const hit = el("line", { x1: ax, y1: y0, x2: bx, y2: yEnd, class: "hit", stroke: "transparent", "stroke-width": 9 }, g);
    const line = el("line", { x1: ax, y1: y0, x2: bx, y2: yEnd, stroke: lost ? COLOURS.grey : colour,
      "stroke-width": o.compact ? 1.3 : 1.8, "stroke-dasharray": lost || m.kind === "dropped" ? "5 3" : null,
      "marker-end": lost ? null : `url(#${id}-${m.info && m.info.ignored ? "grey" : kind})`, class: "arrow" }, g);
    const dot = el("circle", { r: o.compact ? 3 : 4.5, fill: colour, class: "dot", visibility: "hidden" }, g);
    let cross = null;
    if (lost) {
      const c = o.compact ? 4 : 6;
      cross = el("path", { d: `M${bx - c},${yEnd - c} L${bx + c},${yEnd + c} M${bx - c},${yEnd + c} L${bx + c},${yEnd - c}`,
        stroke: COLOURS.black, "stroke-width": o.compact ? 2 : 2.8, class: "cross" }, g);
      obstacles.push([bx - c - 1, yEnd - c - 1, bx + c + 1, yEnd + c + 1]);
      if (!o.compact) {
        label({ variants: [w("lost")], anchor: [bx, yEnd], radius: c, colour: COLOURS.vermillion, weight: "bold", priority: 0,
          prefer: ["right", "left", "below-right", "above-right"], start: tEnd });
      }
    }
    const why = o.lost ? o.lost(m.event) : null;
    if (why) g.classList.add("fixed");
    title(g, [m.what, why].filter(Boolean).join(" — "));
    if (o.onMessage && !o.compact && !why) { // a message that cannot be lost (or is lost) is not a button
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.setAttribute("aria-label", [m.what || kind, why].filter(Boolean).join(" — "));
      g.addEventListener("click", () => o.onMessage(m.event));
      g.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); o.onMessage(m.event); } });
    }
    if (m.what && !o.compact) {
      const priority = { request: 2, "processor.lookup": 2, "processor.answer": 1, dropped: 1 }[m.kind] ?? 0;
      const tc = { request: "#00466E", "processor.lookup": "#8A5A00", "processor.answer": "#8A5A00", dropped: "#555" }[m.kind] ?? "#000";
      const along = lost ? [0.35, 0.6, 0.2] : [0.5, 0.3, 0.7, 0.15, 0.85];
      label({ variants: [m.what, ...(m.shorter || [])], anchors: along.map((f) => [ax + (bx - ax) * f, y0 + (yEnd - y0) * f]),
        segment: true, colour: m.info && m.info.ignored ? "#555" : tc, priority, start: m.sent });
    }
    hold(g, m.sent, (now) => {
      const f = tEnd > m.sent ? Math.min(1, Math.max(0, (now - m.sent) / (tEnd - m.sent))) : 1;
      const px = ax + (bx - ax) * f;
      const py = y0 + (yEnd - y0) * f;
      line.setAttribute("x2", px);
      line.setAttribute("y2", py);
      hit.setAttribute("x2", bx);
      const flying = now >= m.sent && now < tEnd;
      dot.setAttribute("cx", px);
      dot.setAttribute("cy", py);
      dot.setAttribute("visibility", flying ? "visible" : "hidden");
      line.setAttribute("marker-end", !lost && f >= 1 ? `url(#${id}-${m.info && m.info.ignored ? "grey" : kind})` : "");
      if (cross) cross.setAttribute("visibility", now >= tEnd ? "visible" : "hidden");
    });
  }

  // -- marks -----------------------------------------------------------------------------------------------
  const duplicates = new Map();
  for (const p of scene.ledger) for (const e of [...p.charges, ...p.captures]) duplicates.set(`${e.kind}:${e.id}`, e.duplicate);
  const strip = lanes.some((l) => l.id === "ledger:charges");
  for (const mark of scene.marks) {
    const words = mark.label ? [mark.label, ...(mark.shorter || [])] : [];
    if (mark.kind === "restart") {
      if (!handlerLanes.length) continue;
      const top = y[handlerLanes[0]] - pitch * 0.4;
      const bottom = y[handlerLanes[handlerLanes.length - 1]] + pitch * 0.4;
      const g = tagged(el("g", { class: "mark restart" }, gMarks), mark.event);
      el("line", { x1: x(mark.t), x2: x(mark.t), y1: top, y2: bottom, stroke: holds ? COLOURS.green : COLOURS.neutral, "stroke-width": 2 }, g);
      title(g, mark.label);
      hold(g, mark.t);
      if (!o.compact) label({ variants: words, anchor: [x(mark.t), top], radius: 2, colour: outcomeText.ok, weight: "bold", priority: 1,
        prefer: ["above-right", "right"], start: mark.t });
      continue;
    }
    const ly = y[mark.lane];
    if (ly === undefined) continue;
    const mx = x(mark.t);
    const g = tagged(el("g", { class: `mark ${mark.kind}` }, gMarks), mark.event);
    title(g, mark.label);
    hold(g, mark.t);
    const s = o.compact ? 0.7 : 1;
    let r = 0;
    let lab = null;
    if (mark.kind === "statement") {
      const error = mark.info.error !== null && mark.info.error !== undefined;
      el("line", { x1: mx, x2: mx, y1: ly - 7 * s, y2: ly + 7 * s, stroke: error ? COLOURS.vermillion : COLOURS.grey, "stroke-width": error ? 2 : 1.3 }, g);
      el("rect", { x: mx - 4, y: ly - 8, width: 8, height: 16, fill: "transparent" }, g);
    } else if (mark.kind === "charge") {
      const committed = mark.info.committed;
      const writer = y[mark.info.writer];
      if (writer !== undefined) el("line", { x1: mx, x2: mx, y1: writer, y2: ly, stroke: COLOURS.blue, "stroke-width": 0.9, "stroke-dasharray": "1 2" }, g);
      const red = duplicates.get(`charge:ch_${mark.info.id}`);
      r = 6 * s;
      el("rect", { x: mx - r, y: ly - r, width: 2 * r, height: 2 * r, fill: committed ? (red ? COLOURS.vermillion : COLOURS.blue) : "white", stroke: "#000", "stroke-width": 1.2 }, g);
      if (!(strip && committed)) lab = { priority: committed ? 1 : 3, colour: "#00466E", weight: "bold" };
    } else if (mark.kind === "capture") {
      const red = duplicates.get(`capture:${mark.info.id}`);
      r = 6.5 * s;
      el("circle", { cx: mx, cy: ly, r, fill: red ? COLOURS.vermillion : COLOURS.orange, stroke: "#000", "stroke-width": 1.2 }, g);
      if (!strip) lab = { priority: 1, colour: "#8A5A00", weight: "bold", prefer: ["below-right", "above-right", "below", "above"] };
    } else if (mark.kind === "crash") {
      r = 10 * s;
      el("path", { d: star(mx, ly, r, r * 0.45), fill: COLOURS.vermillion, stroke: "#000", "stroke-width": 0.8 }, g);
      lab = { priority: 0, colour: OUTCOME_TEXT.fail, weight: "bold", prefer: ["above-right", "right", "above"] };
    } else if (mark.kind === "died") {
      r = 7 * s;
      el("line", { x1: mx, x2: mx, y1: ly - r, y2: ly + r, stroke: COLOURS.vermillion, "stroke-width": 3 }, g);
    } else if (mark.kind === "outcome") {
      const out = mark.info.outcome;
      r = 6 * s;
      const fill = outcome[out] || COLOURS.grey;
      if (out === "ok") el("circle", { cx: mx, cy: ly, r, fill, stroke: "#000" }, g);
      else if (out === "fail") el("rect", { x: mx - r, y: ly - r, width: 2 * r, height: 2 * r, fill, stroke: "#000" }, g);
      else el("path", { d: `M${mx},${ly - r - 1} L${mx + r + 1},${ly} L${mx},${ly + r + 1} L${mx - r - 1},${ly} z`, fill, stroke: "#000" }, g);
      lab = { priority: 0, colour: outcomeText[out] || "#333", weight: "bold", prefer: ["above", "above-right", "above-left"] };
    } else if (mark.kind === "timeout") {
      r = 4.5 * s;
      el("path", { d: `M${mx},${ly - r} L${mx + r},${ly} L${mx},${ly + r} L${mx - r},${ly} z`, fill: "white", stroke: COLOURS.orange, "stroke-width": 1.6 }, g);
      lab = { priority: 1, colour: "#8A5A00" };
    } else if (mark.kind === "refused") {
      lab = { priority: 1, colour: "#555" };
    } else if (mark.kind === "state") {
      r = 3;
      el("circle", { cx: mx, cy: ly, r, fill: "#555" }, g);
      lab = { priority: 3, colour: "#555", prefer: ["below-right", "above-right"] };
    } else if (mark.kind === "finish" || mark.kind === "release") {
      r = 6 * s;
      el("path", { d: plus(mx, ly, r), fill: holds ? COLOURS.green : COLOURS.neutral, stroke: "#000" }, g);
      lab = { priority: 1, colour: holds ? "#005F46" : COLOURS.neutralText };
    } else if (mark.kind === "give_up") {
      lab = { priority: 3, colour: OUTCOME_TEXT.fail, prefer: ["below-right", "below"] };
    }
    if (r) obstacles.push([mx - r - 1, ly - r - 1, mx + r + 1, ly + r + 1]);
    if (lab && words.length && (!o.compact || mark.kind === "outcome" || mark.kind === "crash")) {
      label({ variants: o.compact ? [words[words.length - 1]] : words, anchor: [mx, ly], radius: r || 3, start: mark.t, ...lab });
    }
  }

  // -- the scene's tracks ----------------------------------------------------------------------------------
  if (!o.compact) {
    drawKeys();
    drawLedger();
    drawBeliefs();
  }

  function drawKeys() {
    for (const track of scene.keys) {
      const ly = y[track.lane];
      if (ly === undefined) continue;
      for (const record of track.records) {
        record.states.forEach((state, i) => {
          const last = i === record.states.length - 1;
          const stop = record.ended === null && last ? t1 : state.end;
          const g = tagged(el("g", { class: `key ${state.state}` }, gBands), state.event);
          const r = el("rect", { x: x(state.start), y: ly - 8, height: 16, fill: state.state === "in_progress" ? `url(#${id}-hatchkey)` : (KEY_COLOUR[state.state] || "#DDD"),
            stroke: "#555", "stroke-width": 0.6 }, g);
          grow(r, { start: state.start, end: stop });
          title(g, state.label);
          label({ variants: [state.label], anchor: [x(state.start), ly], radius: 8, colour: "#333", priority: 2,
            prefer: ["above-right", "below-right"], start: state.start, rings: 1 });
        });
        const ret = record.retention;
        if (ret.end <= t1 && ret.ttl < 10 * Math.max(scene.end, 1)) {
          const top = ly - 14;
          const g = el("g", { class: "retention" }, gBands);
          el("path", { d: `M${x(ret.start)},${top + 4} V${top} H${x(ret.end)} V${top + 4}`, fill: "none", stroke: "#555", "stroke-width": 1 }, g);
          title(g, ret.label);
          hold(g, ret.start);
          label({ variants: [ret.label], anchor: [(x(ret.start) + x(ret.end)) / 2, top], radius: 2, colour: "#333", priority: 2,
            prefer: ["above"], start: ret.start });
        }
        if (record.ended) {
          const e = record.ended;
          const g = tagged(el("g", { class: `key-end ${e.how}` }, gMarks), e.event);
          el("path", { d: xMark(x(e.t), ly, 6), fill: e.how === "expired" ? COLOURS.vermillion : "#000", stroke: "#000", "stroke-width": 0.8 }, g);
          obstacles.push([x(e.t) - 7, ly - 7, x(e.t) + 7, ly + 7]);
          title(g, e.label);
          hold(g, e.t);
          label({ variants: [e.label], anchor: [x(e.t), ly], radius: 7, colour: e.how === "expired" ? OUTCOME_TEXT.fail : COLOURS.neutralText,
            weight: "bold", priority: -1, prefer: ["below-right", "above-right", "right", "below", "above", "left", "below-left", "above-left"], start: e.t });
        }
        if (record.again) {
          const g = tagged(el("g", { class: "key-again" }, gMarks), record.event);
          const ax = x(record.created);
          el("path", { d: `M${ax - 7},${ly - 7} L${ax + 5},${ly} L${ax - 7},${ly + 7} z`, fill: COLOURS.vermillion, stroke: "#000" }, g);
          obstacles.push([ax - 8, ly - 8, ax + 6, ly + 8]);
          title(g, record.again_label);
          hold(g, record.created);
          label({ variants: [record.again_label], anchor: [ax, ly], radius: 8, colour: OUTCOME_TEXT.fail, weight: "bold", priority: -2,
            prefer: ["below-left", "above-left", "left", "below-right", "above-right", "below", "above"], start: record.created });
        }
      }
    }
  }

  function drawLedger() {
    const rows = { charge: y["ledger:charges"], capture: y["ledger:captures"] };
    if (rows.charge === undefined || rows.capture === undefined) return;
    for (const purchase of scene.ledger) {
      for (const entry of [...purchase.charges, ...purchase.captures]) {
        const ly = rows[entry.kind];
        const ex = x(entry.t);
        const g = tagged(el("g", { class: `ledger ${entry.kind}${entry.duplicate ? " duplicate" : ""}${entry.orphan ? " orphan" : ""}` }, gMarks), entry.event);
        const base = entry.kind === "charge" ? COLOURS.blue : COLOURS.orange;
        const fill = entry.orphan ? "white" : entry.duplicate ? COLOURS.vermillion : base;
        const stroke = entry.orphan ? COLOURS.vermillion : "#000";
        const sw = entry.orphan ? 2.2 : 1.2;
        if (entry.kind === "charge") el("rect", { x: ex - 6, y: ly - 6, width: 12, height: 12, fill, stroke, "stroke-width": sw }, g);
        else el("circle", { cx: ex, cy: ly, r: 6.5, fill, stroke, "stroke-width": sw }, g);
        obstacles.push([ex - 7, ly - 7, ex + 7, ly + 7]);
        title(g, entry.label);
        hold(g, entry.t);
        const red = entry.duplicate || entry.orphan;
        label({ variants: [entry.label, ...(entry.orphan ? [entry.id] : [])], anchor: [ex, ly], radius: 7, weight: "bold",
          colour: red ? OUTCOME_TEXT.fail : entry.kind === "charge" ? "#00466E" : "#8A5A00", priority: 1,
          prefer: ["above", "above-right", "above-left", "right"], start: entry.t });
      }
      for (const pair of purchase.pairs) {
        const ly = rows[pair.kind === "charged_twice" ? "charge" : "capture"] + 13;
        const g = el("g", { class: "pair" }, gMarks);
        el("path", { d: `M${x(pair.start)},${ly - 4} V${ly} H${x(pair.end)} V${ly - 4}`, fill: "none", stroke: COLOURS.vermillion, "stroke-width": 1.6 }, g);
        title(g, pair.label);
        hold(g, pair.end);
        label({ variants: [pair.label], anchors: [0.5, 0.35, 0.65, 0.2, 0.8].map((f) => [x(pair.start) + (x(pair.end) - x(pair.start)) * f, ly]),
          radius: 2, colour: OUTCOME_TEXT.fail, weight: "bold", priority: -1, prefer: ["below", "below-right", "below-left"], start: pair.end });
      }
    }
  }

  function drawBeliefs() {
    const byLane = new Map();
    for (const b of scene.beliefs) {
      if (!byLane.has(b.lane)) byLane.set(b.lane, []);
      byLane.get(b.lane).push(b);
    }
    for (const [lane, beliefs] of byLane) {
      const ly = y[lane];
      if (ly === undefined) continue;
      for (const belief of beliefs) {
        const slot = slots.of.get(belief);
        const rows = slots.rows.get(lane) || 1;
        const offset = (slot - (rows - 1) / 2) * 8;
        const half = rows > 1 ? 3 : 4;
        let previous = null;
        belief.spans.forEach((span, i) => {
          let colour = span.differs ? COLOURS.vermillion : BELIEF_COLOUR[span.believes] || COLOURS.neutral;
          if (span.believes === "paid" && !span.differs && holds) colour = COLOURS.green;
          const stop = i === belief.spans.length - 1 ? t1 : span.end;
          const g = el("g", { class: `belief ${span.believes}${span.differs ? " differs" : ""}` }, gBands);
          const r = el("rect", { x: x(span.start), y: ly + offset - half, height: 2 * half, fill: colour, opacity: span.told ? 0.75 : 0.3 }, g);
          grow(r, { start: span.start, end: stop });
          title(g, span.label);
          const key = `${span.believes}/${span.differs}`;
          if (span.told && key !== previous) {
            previous = key;
            label({ variants: [span.label], anchor: [x(span.start), ly + offset], radius: 4, colour: span.differs ? OUTCOME_TEXT.fail : "#333",
              priority: 3, prefer: ["above-right", "below-right", "right"], start: span.start, rings: 1 });
          }
        });
      }
    }
  }

  // -- labels ----------------------------------------------------------------------------------------------
  const placed = [];
  const bounds = [left - 4, 0, width - 2, axisY - 2];
  const free = (box) => box[0] >= bounds[0] && box[2] <= bounds[2] && box[1] >= bounds[1] && box[3] <= bounds[3]
    && !placed.some((b) => overlaps(b, box)) && !obstacles.some((b) => overlaps(b, box));
  requests.sort((a, b) => a.priority - b.priority);
  for (const req of requests) {
    const anchors = req.anchors || [req.anchor];
    let done = false;
    for (const variant of req.variants) {
      const tw = textWidth(variant, req.size, req.weight) + 4;
      const th = req.size + 3;
      for (const [ax, ay] of anchors) {
        const candidates = req.segment ? [["above", 2], ["below", 2]] : req.prefer.map((p) => [p, req.radius]);
        for (const [where, rad] of candidates) {
          const box = boxAt(where, ax, ay, tw, th, rad + 2);
          if (!free(box)) continue;
          placed.push(box);
          // every label lies above all drawings, faded with the thing it names, and lets a pointer through to what
          // it names (a click on a message's label is a click on the message)
          const t = el("text", { x: box[0] + 2, y: box[3] - 4 + 0.5, "font-size": req.size, "font-weight": req.weight, fill: req.colour, class: "label" }, gLabels);
          t.textContent = variant;
          hold(t, req.start ?? 0);
          done = true;
          break;
        }
        if (done) break;
      }
      if (done) break;
    }
  }

  // -- time ------------------------------------------------------------------------------------------------
  const nowLine = el("line", { y1: 4, y2: axisY, stroke: "#444", "stroke-width": 1, "stroke-dasharray": "2 3", visibility: "hidden" }, gNow);
  function setTime(now) {
    const all = !Number.isFinite(now) || now >= scene.end;
    const t = all ? Infinity : now;
    for (const item of timed) {
      item.node.classList.toggle("future", t < item.start);
      if (item.update) item.update(all ? 1e12 : t);
    }
    nowLine.setAttribute("visibility", all ? "hidden" : "visible");
    if (!all) { nowLine.setAttribute("x1", x(now)); nowLine.setAttribute("x2", x(now)); }
  }
  setTime(Infinity);
  return { setTime, end: scene.end, times: eventTimes(scene), height, width };
}

/** Which sub-row of its lane each belief (one operation's) takes, so that operations that overlap in time
 * share a lane without covering each other: {of: Map(belief → slot), rows: Map(lane → sub-rows)}. */
function beliefSlots(beliefs) {
  const of = new Map();
  const rows = new Map();
  const busy = new Map();
  for (const belief of beliefs) {
    const ends = busy.get(belief.lane) || [];
    const start = belief.spans.length ? belief.spans[0].start : 0;
    let slot = ends.findIndex((end) => end <= start);
    if (slot < 0) { slot = ends.length; ends.push(0); }
    ends[slot] = belief.spans.length ? Math.max(...belief.spans.map((s) => s.end)) : start;
    busy.set(belief.lane, ends);
    of.set(belief, slot);
    rows.set(belief.lane, Math.max(rows.get(belief.lane) || 1, slot + 1));
  }
  return { of, rows };
}

// -- shapes and geometry --------------------------------------------------------------------------------------
function niceStep(span, bins) {
  const raw = Math.max(span, 0.001) / bins;
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function overlaps(a, b) {
  return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

function boxAt(where, x, y, w, h, r) {
  switch (where) {
    case "above": return [x - w / 2, y - r - h, x + w / 2, y - r];
    case "below": return [x - w / 2, y + r, x + w / 2, y + r + h];
    case "right": return [x + r, y - h / 2, x + r + w, y + h / 2];
    case "left": return [x - r - w, y - h / 2, x - r, y + h / 2];
    case "above-right": return [x + r * 0.6, y - r - h, x + r * 0.6 + w, y - r];
    case "below-right": return [x + r * 0.6, y + r, x + r * 0.6 + w, y + r + h];
    case "above-left": return [x - r * 0.6 - w, y - r - h, x - r * 0.6, y - r];
    case "below-left": return [x - r * 0.6 - w, y + r, x - r * 0.6, y + r + h];
    default: return [x - w / 2, y - h / 2, x + w / 2, y + h / 2];
  }
}

function star(cx, cy, r1, r2) {
  const points = [];
  for (let i = 0; i < 10; i++) {
    const r = i % 2 ? r2 : r1;
    const a = (Math.PI / 5) * i - Math.PI / 2;
    points.push(`${(cx + r * Math.cos(a)).toFixed(1)},${(cy + r * Math.sin(a)).toFixed(1)}`);
  }
  return `M${points.join(" L")} z`;
}

function plus(cx, cy, r) {
  const a = r / 3;
  return `M${cx - a},${cy - r} H${cx + a} V${cy - a} H${cx + r} V${cy + a} H${cx + a} V${cy + r} H${cx - a} V${cy + a} H${cx - r} V${cy - a} H${cx - a} z`;
}

function xMark(cx, cy, r) {
  const a = r * 0.35;
  return `M${cx - r},${cy - r + a} L${cx - r + a},${cy - r} L${cx},${cy - a} L${cx + r - a},${cy - r} L${cx + r},${cy - r + a} L${cx + a},${cy} `
    + `L${cx + r},${cy + r - a} L${cx + r - a},${cy + r} L${cx},${cy + a} L${cx - r + a},${cy + r} L${cx - r},${cy + r - a} L${cx - a},${cy} z`;
}
