// app.js — the page: reads the URL, asks the engine for the story, draws it, and lets a student break it.
// Guarantees:
// - Every state is a URL: after each run the address is `?<answer.query>` (plus `lang` when it differs from the
//   browser's), replaced on the first load and pushed after each change (Back returns to the previous story).
// - window.idemsim = {ready, state(), messages(), lose(event), crash(handler, point)}: `ready` resolves once the
//   URL's story is drawn by the engine (a static site's embedded story is drawn at once, but `ready` waits for
//   the engine's run of it, so that a click is answered at once; navigating away while Pyodide was still loading
//   crashed headless Chromium's tab in the browser tests), or once its error is shown; lose/crash resolve once the re-run is drawn; losing a lost message
//   resolves at once and changes nothing. No promise of the page ever rejects and nothing is thrown to the console:
//   an error (a bad URL, an engine's 400) is one line in #error.
// - Every word shown comes from the engine's answer or catalogue, or from words.js (the page's own).
// - The engine's kind is never shown: #engine-status says only that it is loading.

import { connect } from "./engine.js";
import { drawScene, breakTime } from "./draw.js";
import { makePlayer } from "./player.js";
import { showComparison } from "./compare.js";
import { wordsFor, fill } from "./words.js";

const KEYS = ["scenario", "design", "variant", "seed", "lang", "faults"];
const $ = (id) => document.getElementById(id);

const browserLang = (navigator.languages || [navigator.language || "en"]).some((l) => /^ja\b/i.test(l)) ? "ja" : "en";

const page = {
  engine: null,
  catalog: null,
  answer: null,
  drawing: null,
  query: {},
  undo: [],
  lang: browserLang,
  runs: 0,
  loaded: false,
  embedded: false, // the picture on screen is the site's embedded story, not yet the engine's run
};

let words = wordsFor(page.lang);

// -- errors and the engine's status ---------------------------------------------------------------------------
function showError(error) {
  const line = String(error && error.message !== undefined ? error.message : error).split("\n")[0];
  $("error").textContent = line;
  $("error").hidden = !line;
}

function clearError() {
  $("error").textContent = "";
  $("error").hidden = true;
}

function status(text) {
  $("engine-status").textContent = text || "";
}

/** engine.js's onProgress(fraction 0..1, words (English), stage): said in the page's language, as a share. */
function progress(fraction, said, stage) {
  if (page.loaded) return;
  if (stage === "ready") {
    status("");
    return;
  }
  if (stage === "failed") {
    status("");
    showError(said);
    return;
  }
  const share = Number.isFinite(fraction) && fraction > 0 && fraction < 1 ? ` ${Math.round(100 * fraction)} %` : "";
  status(`${words.loading}${share}`);
}

/** `promise`, with any failure shown on the page instead of thrown. */
function safely(promise) {
  return Promise.resolve(promise).catch((e) => { showError(e); });
}

// -- the URL --------------------------------------------------------------------------------------------------
function queryFromURL() {
  const params = new URLSearchParams(location.search);
  const query = {};
  for (const key of KEYS) {
    if (!params.has(key)) continue;
    const value = params.get(key);
    if (value !== "" || key === "faults") query[key] = value;
  }
  return query;
}

function setURL(answer, push) {
  const params = new URLSearchParams(answer.query || "");
  const lang = answer.state.lang;
  if (!params.has("lang") && lang !== browserLang) params.set("lang", lang);
  // `:`, `@`, `,` and `+` of the fault syntax are kept readable in the address (all are allowed in a query)
  const readable = params.toString().replace(/%3A/gi, ":").replace(/%40/gi, "@").replace(/%2C/gi, ",").replace(/%2B/gi, "%2B");
  const url = `${location.pathname}?${readable}`;
  if (`${location.pathname}${location.search}` === url) return;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}

function queryOf(answer) {
  const params = new URLSearchParams(answer.query || "");
  const query = {};
  for (const key of KEYS) if (params.has(key)) query[key] = params.get(key);
  query.lang = answer.state.lang;
  return query;
}

// -- running a story ------------------------------------------------------------------------------------------
async function run(query, { push = true, remember = true } = {}) {
  if (!page.engine) return;
  const ticket = ++page.runs;
  const before = page.answer ? queryOf(page.answer) : null;
  $("stage").classList.add("working");
  try {
    const answer = await page.engine.run({ ...query, lang: query.lang || page.lang });
    if (ticket !== page.runs) return; // a later run has started: its answer is drawn instead
    if (remember && before) {
      page.undo.push(before);
      $("undo").disabled = false;
    }
    clearError();
    if (answer.state.lang !== page.lang) await setLanguage(answer.state.lang, false);
    if (page.embedded && sameStory(page.answer, answer)) page.answer = answer; // drawn already: keep the picture
    else render(answer);
    page.embedded = false;
    setURL(answer, push);
    if (!page.loaded) {
      page.loaded = true;
      status("");
    }
  } catch (e) {
    if (ticket === page.runs) showError(e);
  } finally {
    if (ticket === page.runs) $("stage").classList.remove("working");
  }
}

/** Whether two answers tell the same story (the embedded one and the engine's run of its query). */
function sameStory(a, b) {
  return Boolean(a && b) && a.query === b.query && JSON.stringify(a.state) === JSON.stringify(b.state);
}

function render(answer, keepTime = false) {
  page.answer = answer;
  page.query = queryOf(answer);
  const scene = answer.scene;
  document.title = `${answer.title} — idemsim`;
  $("story-title").textContent = answer.title;
  $("story-text").textContent = answer.story || "";
  $("teaches").textContent = answer.teaches || "";
  $("teaches-box").hidden = !answer.teaches;
  $("article").replaceChildren(...paragraphs(answer.article || ""));
  $("article-box").hidden = !answer.article;
  $("command").textContent = answer.command || "";
  $("copy").textContent = words.copy;
  const faults = answer.state.faults;
  $("faults-now").replaceChildren(`${words.faults}: `, faults ? code(faults) : words.no_faults);
  $("story-verdict").textContent = fill(words.story_line, { check: scene.verdicts.story });
  syncPickers();
  closeCrashMenu();
  clearEvent();  // the panel spoke of the run before: its event numbers mean other events now
  const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest("#scene [data-event], #scene [data-lane]") : null;
  const again = focused ? (focused.hasAttribute("data-event") ? `[data-event="${focused.dataset.event}"]` : `[data-lane="${focused.dataset.lane}"]`) : null;
  page.drawing = drawScene($("scene"), scene, {
    width: stageWidth(),
    fit: Math.max(320, window.innerHeight - $("stage").getBoundingClientRect().top - window.scrollY - 100),
    words,
    onMessage: (event) => safely(lose(event)),
    onHandler: openCrashMenu,
    lost: (event) => {
      const m = answer.messages.find((x) => x.event === event);
      if (!m) return null;
      if (m.lost) return words.already_lost;
      return m.fault ? null : words.cannot_lose;
    },
  });
  page.drawing.breaks = breakTime(scene);
  player.load(page.drawing, keepTime);
  if (again) { // keyboard focus stays on the thing it was on (the message just lost, the handler just crashed)
    const node = $("scene").querySelector(again);
    if (node && node.hasAttribute("tabindex")) node.focus(); else $("play").focus();
  }
}

const WIDE = /[\u2E80-\u9FFF\uF900-\uFAFF\uFF00-\uFFEF]/;

/** A passage wrapped in its source file, as paragraphs: a line break inside a paragraph is no space between two
 * Japanese characters and one space otherwise (as the CLI unwraps the article). */
function paragraphs(text) {
  return text.trim().split(/\n\s*\n/).map((block) => {
    const lines = block.split("\n").map((line) => line.trim()).filter(Boolean);
    let joined = lines[0] || "";
    for (const line of lines.slice(1)) {
      joined += WIDE.test(joined.slice(-1)) && WIDE.test(line[0]) ? line : ` ${line}`;
    }
    const p = document.createElement("p");
    p.textContent = joined;
    return p;
  });
}

function code(text) {
  const c = document.createElement("code");
  c.textContent = text;
  return c;
}

function stageWidth() {
  return Math.round(Math.min(1700, Math.max(700, $("stage").clientWidth || 1000)));
}

// -- time: what the verdicts and the ledger say at the scrubber's time ----------------------------------------
function onTime(now) {
  if (!page.drawing || !page.answer) return;
  page.drawing.setTime(now);
  const scene = page.answer.scene;
  const verdict = $("design-verdict");
  const end = now >= scene.end;
  const broken = page.drawing.breaks !== null && now >= page.drawing.breaks;
  if (broken || (end && scene.verdicts.holds)) {
    verdict.textContent = fill(words.design_line, { verdict: scene.verdicts.design });
    verdict.className = `verdict ${scene.verdicts.holds ? "holds" : "broken"}`;
  } else {
    verdict.textContent = words.so_far;
    verdict.className = "verdict pending";
  }
  const ledger = $("ledger-words");
  ledger.replaceChildren();
  const name = (id) => (scene.lanes.find((l) => l.id === id) || { name: id }).name;
  for (const [kind, lane] of [["charges", "ledger:charges"], ["captures", "ledger:captures"]]) {
    const entries = scene.ledger.flatMap((p) => p[kind]).filter((e) => e.t <= now).sort((a, b) => a.t - b.t);
    if (!scene.lanes.some((l) => l.id === lane)) continue;
    const part = document.createElement("span");
    part.append(`${name(lane)}: `);
    if (!entries.length) part.append("—");
    entries.forEach((e, i) => {
      const s = document.createElement("span");
      s.textContent = e.id;
      if (e.duplicate) s.className = "dup";
      if (e.orphan) { s.className = "orphan"; s.title = e.label; }
      part.append(i ? " " : "", s);
    });
    part.append("  ");
    ledger.append(part, " ");
  }
}

const player = makePlayer({
  play: $("play"), back: $("step-back"), forward: $("step-forward"), scrubber: $("scrubber"), clock: $("clock"),
  onTime, words: () => words,
});

// -- the side panel: an event's SQL and trace line ------------------------------------------------------------
let selected = null;
function showEvent(n) {
  const answer = page.answer;
  if (!answer || !answer.events) return;
  const event = answer.events.find((e) => e.event === n) || answer.events[n];
  if (!event) return;
  $("details-hint").hidden = true;
  $("details-body").hidden = false;
  $("details-head").textContent = `#${event.event} · ${Number(event.t).toFixed(3)} s · ${event.actor} · ${event.kind}`;
  $("details-sql").textContent = event.sql || words.no_sql;
  $("details-line").textContent = event.line || "";
  if (selected) selected.classList.remove("selected");
  selected = null;
}

function clearEvent() {
  $("details-hint").hidden = false;
  $("details-body").hidden = true;
  if (selected) selected.classList.remove("selected");
  selected = null;
}

function eventOf(target) {
  const node = target && target.closest ? target.closest("[data-event], [data-trace]") : null;
  return node ? Number(node.getAttribute(node.hasAttribute("data-event") ? "data-event" : "data-trace")) : null;
}

$("scene").addEventListener("pointerover", (e) => { const n = eventOf(e.target); if (n !== null) showEvent(n); });
$("scene").addEventListener("focusin", (e) => { const n = eventOf(e.target); if (n !== null) showEvent(n); });
$("scene").addEventListener("click", (e) => {
  const n = eventOf(e.target);
  if (n !== null && !e.target.closest(".message")) showEvent(n);
});

// -- breaking it: lose a message, crash a handler -------------------------------------------------------------
async function addFault(token) {
  const faults = page.answer.state.faults;
  const tokens = faults ? faults.split(",").map((t) => t.trim()).filter(Boolean) : [];
  if (tokens.includes(token)) return;
  await run({ ...page.query, faults: [...tokens, token].join(",") });
}

async function lose(event) {
  if (!page.answer) return;
  const n = Number(event);
  const m = page.answer.messages.find((x) => x.event === n);
  if (!m) { showError(fill(words.unknown_event, { event })); return; }
  if (m.lost) return;
  if (!m.fault) { showError(words.cannot_lose); return; }
  await addFault(m.fault);
}

function findHandler(handler) {
  const hs = page.answer.handlers || [];
  return hs.find((h) => h.lane === handler) || hs.find((h) => h.name === handler)
    || hs.find((h) => `${h.op}.${h.attempt}` === String(handler)) || (Number.isInteger(handler) ? hs[handler] : undefined);
}

async function crash(handler, point) {
  if (!page.answer) return;
  const h = findHandler(handler);
  const hs = page.answer.handlers || [];
  if (!h) { showError(fill(words.unknown_handler, { handler, handlers: hs.map((x) => x.lane).join(", ") })); return; }
  const token = h.crash && h.crash[point];
  if (!token) {
    showError(fill(words.unknown_point, { point, handler: h.name, points: Object.keys(h.crash || {}).join(", ") || "—" }));
    return;
  }
  await addFault(token);
}

function openCrashMenu(lane, anchor) {
  const h = findHandler(lane);
  const menu = $("crash-menu");
  menu.replaceChildren();
  const head = document.createElement("h3");
  head.textContent = fill(words.crash_menu, { name: h ? h.name : lane });
  menu.append(head);
  const points = h ? Object.keys(h.crash || {}) : [];
  if (!points.length) {
    const p = document.createElement("p");
    p.className = "hint";
    p.textContent = words.crash_none;
    menu.append(p);
  }
  for (const point of points) {
    const b = document.createElement("button");
    b.type = "button";
    b.setAttribute("role", "menuitem");
    b.dataset.point = point;
    b.textContent = words[`crash_at.${point}`] || point;
    b.title = h.crash[point];
    b.addEventListener("click", () => { closeCrashMenu(); anchor.focus(); safely(crash(lane, point)); });
    menu.append(b);
  }
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = words.close;
  close.addEventListener("click", () => { closeCrashMenu(); anchor.focus(); });
  menu.append(close);
  const box = anchor.getBoundingClientRect();
  menu.style.left = `${Math.max(4, box.left + window.scrollX)}px`;
  menu.style.top = `${box.bottom + window.scrollY + 4}px`;
  menu.hidden = false;
  (menu.querySelector("button") || menu).focus();
}

function closeCrashMenu() {
  $("crash-menu").hidden = true;
}

document.addEventListener("pointerdown", (e) => {
  if (!$("crash-menu").hidden && !e.target.closest("#crash-menu") && !e.target.closest(".lane-label")) closeCrashMenu();
});

// -- the pickers ----------------------------------------------------------------------------------------------
function option(value, text, title) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  if (title) o.title = title;
  return o;
}

function scenarioOf(name) {
  for (const g of (page.catalog && page.catalog.groups) || []) for (const s of g.scenarios) if (s.name === name) return s;
  return null;
}

function fillPickers() {
  const c = page.catalog;
  if (!c) return;
  const scenario = $("scenario");
  scenario.replaceChildren();
  for (const group of c.groups) {
    const og = document.createElement("optgroup");
    og.label = group.title;
    for (const s of group.scenarios) og.append(option(s.name, `${s.name} — ${s.title}`, s.summary));
    scenario.append(og);
  }
  const design = $("design");
  design.replaceChildren(...c.designs.map((d) => option(d.name, d.name, d.title)));
  syncPickers();
}

function syncPickers() {
  const state = page.answer ? page.answer.state : null;
  const name = state ? state.scenario : page.query.scenario;
  if (name) $("scenario").value = name;
  const s = scenarioOf(name);
  const variant = $("variant");
  variant.replaceChildren(option("", words.main_story));
  for (const v of (s && s.variants) || []) variant.append(option(v.name, v.title && v.title !== v.name ? `${v.name} — ${v.title}` : v.name, v.summary));
  variant.disabled = !(s && s.variants && s.variants.length);
  if (state) {
    $("design").value = state.design;
    variant.value = state.variant || "";
    $("seed").value = state.seed;
  }
  $("lang").value = page.lang;
}

$("pick").addEventListener("submit", (e) => e.preventDefault());
$("scenario").addEventListener("change", () => safely(run({ scenario: $("scenario").value, lang: page.lang })));
$("design").addEventListener("change", () => safely(run({ ...page.query, design: $("design").value })));
$("variant").addEventListener("change", () => {
  const query = { ...page.query, variant: $("variant").value };
  delete query.faults; // a variant has its own faults
  if (!query.variant) delete query.variant;
  safely(run(query));
});
$("seed").addEventListener("change", () => {
  const seed = $("seed").value.trim();
  const query = { ...page.query };
  if (seed === "") delete query.seed; else query.seed = seed;
  safely(run(query));
});
$("reset").addEventListener("click", () => {
  const query = { ...page.query };
  delete query.faults;
  safely(run(query));
});
$("undo").addEventListener("click", () => {
  const query = page.undo.pop();
  $("undo").disabled = !page.undo.length;
  if (query) safely(run(query, { remember: false }));
});
$("lang").addEventListener("change", () => safely(setLanguage($("lang").value, true)));
$("copy").addEventListener("click", () => {
  const text = $("command").textContent;
  const done = () => { $("copy").textContent = words.copied; setTimeout(() => { $("copy").textContent = words.copy; }, 1500); };
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => selectCommand());
  else { selectCommand(); try { document.execCommand("copy"); done(); } catch (e) { /* the text stays selected */ } }
});

function selectCommand() {
  const range = document.createRange();
  range.selectNodeContents($("command"));
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
}

// -- the language ---------------------------------------------------------------------------------------------
function applyWords() {
  document.documentElement.lang = page.lang;
  for (const node of document.querySelectorAll("[data-word]")) node.textContent = words[node.dataset.word] ?? node.textContent;
  $("tagline").textContent = words.tagline;
  $("details-hint").textContent = words.hover_hint;
  $("break-hint").textContent = words.break_hint;
  $("keys-hint").textContent = words.keys_hint;
  $("compare-title").textContent = words.compare_title;
  $("compare-hint").textContent = words.compare_hint;
  if (!page.answer) document.title = words.page_title;
  player.relabel();
}

async function setLanguage(lang, rerun) {
  page.lang = lang === "ja" ? "ja" : "en";
  words = wordsFor(page.lang, page.catalog && page.catalog.lang === page.lang ? page.catalog.ui : null);
  applyWords();
  if (page.engine && (!page.catalog || page.catalog.lang !== page.lang)) {
    try {
      page.catalog = await page.engine.catalog(page.lang);
      words = wordsFor(page.lang, page.catalog.ui);
      applyWords();
      fillPickers();
    } catch (e) {
      showError(e);
    }
  }
  if (rerun && page.answer) await run({ ...page.query, lang: page.lang }, { remember: false });
}

// -- compare --------------------------------------------------------------------------------------------------
async function compare() {
  if (!page.engine || !page.answer) return;
  const button = $("compare-button");
  button.classList.add("busy");
  try {
    const result = await page.engine.compare({ ...page.query, faults: page.answer.state.faults });
    $("compare-view").hidden = false;
    showComparison($("compare-panels"), result, {
      words,
      onChoose: (design) => { closeCompare(); safely(run({ ...page.query, design })); },
    });
    $("compare-close").focus();
  } catch (e) {
    showError(e);
  } finally {
    button.classList.remove("busy");
  }
}

function closeCompare() {
  $("compare-view").hidden = true;
  $("compare-panels").replaceChildren();
  $("compare-button").focus();
}

$("compare-button").addEventListener("click", () => safely(compare()));
$("compare-close").addEventListener("click", closeCompare);

// -- the keyboard ---------------------------------------------------------------------------------------------
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape") {
    if (!$("crash-menu").hidden) { closeCrashMenu(); return; }
    if (!$("compare-view").hidden) { closeCompare(); return; }
  }
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  const t = e.target;
  const typing = t.matches && t.matches("input:not([type=range]), select, textarea, #crash-menu *, #compare-view *");
  if (typing) return;
  if (e.key === " " || e.key === "Spacebar") {
    if (t.matches && t.matches("button, summary")) return; // Space presses a button
    e.preventDefault();
    player.toggle();
  } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    e.preventDefault();
    player.step(e.key === "ArrowRight" ? 1 : -1);
  }
});

// -- resizing and Back ----------------------------------------------------------------------------------------
let resizing = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => { if (page.answer) render(page.answer, true); }, 200);
});

window.addEventListener("popstate", () => {
  const query = queryFromURL();
  safely(run({ ...query, lang: query.lang || browserLang }, { push: false, remember: false }));
});

// -- start ----------------------------------------------------------------------------------------------------
async function start() {
  const query = queryFromURL();
  page.query = query;
  page.lang = query.lang === "ja" || query.lang === "en" ? query.lang : browserLang;
  words = wordsFor(page.lang);
  applyWords();
  status(words.loading);
  try {
    page.engine = await connect(progress);
  } catch (e) {
    status("");
    showError(e);
    return;
  }
  const asked = { ...query, lang: query.lang || page.lang };
  const catalog = page.engine.catalog(page.lang).then((c) => {
    page.catalog = c;
    words = wordsFor(page.lang, c.ui);
    applyWords();
    fillPickers();
  }, showError);
  const running = run(asked, { push: false, remember: false });
  try {
    // meanwhile the site's embedded story, for a scenario the catalogue has (the page asks for no file it lacks)
    await catalog;
    const known = Boolean(scenarioOf(asked.scenario || "lost-response"));
    const first = known && page.engine.embedded && !page.answer ? await page.engine.embedded(asked) : null;
    if (first && first.scene && !page.answer) {
      render(first);
      page.embedded = true; // (`ready` waits for the engine: see the guarantees above)
    }
  } catch (e) {
    /* no embedded story: the engine's run draws the first picture */
  }
  await running;
  if (!page.loaded) status("");
}

let drawn;
const ready = new Promise((resolve) => { drawn = resolve; });
safely(start()).then(() => drawn());

function copy(value) {
  return value === undefined ? value : JSON.parse(JSON.stringify(value));
}

window.idemsim = {
  ready,
  state: () => (page.answer ? copy(page.answer.state) : null),
  messages: () => (page.answer ? page.answer.messages.map(({ event, from, to, what, lost }) => ({ event, from, to, what, lost })) : []),
  lose: (event) => safely(lose(event)).then(() => undefined),
  crash: (handler, point) => safely(crash(handler, point)).then(() => undefined),
};
