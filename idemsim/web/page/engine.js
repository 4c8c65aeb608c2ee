// The page's engine: where a run comes from, `idemsim serve` or Pyodide in a worker. The page does not know
// which it has beyond `kind` and the loading indicator that onProgress drives.
//
//   import {connect} from "./engine.js";
//   const engine = await connect((fraction, words, stage) => …);
//   engine.kind                   "serve" | "pyodide"
//   await engine.catalog("ja")    the engine's catalog
//   await engine.run(query)       one story: the engine's answer      (query: {scenario, design, variant, seed,
//   await engine.compare(query)   every design: the engine's compare   lang, faults}, each optional, strings)
//   await engine.embedded(query)  the default story's answer written at build time, or null
//
// run, compare and catalog return the engine's JSON, or throw Error(the engine's one line) on a bad query.
// connect reads engine.json beside the page: {"engine": "serve"} (idemsim serve: each call is a GET of
// api/run?QUERY, api/compare?QUERY, api/catalog?lang=L) or {"engine": "pyodide", …} (a static site from
// `idemsim site DIR`: worker.js runs the engine; connect resolves at once and the calls wait for the worker,
// while catalog() and embedded() answer from files of the site). onProgress(fraction, words, stage) reports
// the loading: fraction 0..1, words in English, stage "download" | "python" | "packages" | "idemsim" | "warm" |
// "ready" | "failed" (for a page that says it in its own language); on `serve` it is called once, with 1.

const here = new URL(".", import.meta.url);

async function getJSON(url) {
  let answer;
  try {
    answer = await fetch(url);
  } catch (error) {
    throw new Error(`${url}: ${error.message || error}`);
  }
  let body = null;
  try {
    body = await answer.json();
  } catch (error) {
    body = null;
  }
  if (!answer.ok) {
    throw new Error(body && body.error ? body.error : `${url}: HTTP ${answer.status}`);
  }
  return body;
}

function queryString(query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null) params.set(name, String(value));
  }
  return params.toString();
}

function serveEngine(onProgress) {
  onProgress(1, "Ready", "ready");
  return {
    kind: "serve",
    catalog: (lang) => getJSON(new URL(`api/catalog?${queryString({lang})}`, here)),
    run: (query) => getJSON(new URL(`api/run?${queryString(query)}`, here)),
    compare: (query) => getJSON(new URL(`api/compare?${queryString(query)}`, here)),
    embedded: async () => null,
  };
}

const STORY_NAME = /^[a-z0-9][a-z0-9-]*$/;
const LANG_NAME = /^[a-z]{2}$/;

function pyodideEngine(onProgress) {
  const worker = new Worker(new URL("worker.js", here), {type: "module"});
  const pending = new Map();
  let next = 1;
  let failed = null;

  function failAll(line) {
    failed = line;
    for (const {reject} of pending.values()) reject(new Error(line));
    pending.clear();
  }

  worker.onmessage = (event) => {
    const message = event.data;
    if (message.progress !== undefined) {
      onProgress(message.progress, message.words, message.stage);
      return;
    }
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.status === 200) waiting.resolve(message.body);
    else waiting.reject(new Error(message.body && message.body.error ? message.body.error
      : `the engine answered ${message.status}`));
  };
  worker.onerror = (event) => {
    event.preventDefault();
    const line = `the engine could not start: ${event.message || "worker.js failed to load"}`;
    onProgress(1, line, "failed");
    failAll(line);
  };

  function ask(path, query) {
    if (failed) return Promise.reject(new Error(failed));
    const id = next++;
    return new Promise((resolve, reject) => {
      pending.set(id, {resolve, reject});
      worker.postMessage({id, path, query: Object.fromEntries(Object.entries(query || {})
        .filter(([, value]) => value !== undefined && value !== null).map(([name, value]) => [name, String(value)]))});
    });
  }

  async function file(name) {
    try {
      const answer = await fetch(new URL(name, here));
      return answer.ok ? await answer.json() : null;
    } catch (error) {
      return null;
    }
  }

  return {
    kind: "pyodide",
    catalog: async (lang) => {
      const name = lang || "en";
      return (LANG_NAME.test(name) && await file(`catalog.${name}.json`)) || ask("/api/catalog", {lang: name});
    },
    run: (query) => ask("/api/run", query),
    compare: (query) => ask("/api/compare", query),
    embedded: async (query) => {
      // As the engine reads a query: an empty value is absent, but for faults (empty: no faults, not the story's).
      const given = Object.entries(query || {}).filter(([name, value]) => value !== undefined && value !== null
        && (value !== "" || name === "faults"));
      if (given.some(([name]) => name !== "scenario" && name !== "lang")) return null;
      const {scenario = "lost-response", lang = "en"} = Object.fromEntries(given);
      if (!STORY_NAME.test(scenario) || !LANG_NAME.test(lang)) return null;
      return file(`stories/${scenario}.${lang}.json`);
    },
  };
}

export async function connect(onProgress = () => {}) {
  const config = await getJSON(new URL("engine.json", here));
  if (config.engine === "serve") return serveEngine(onProgress);
  if (config.engine === "pyodide") return pyodideEngine(onProgress);
  throw new Error(`engine.json: unknown engine ${JSON.stringify(config.engine)}`);
}
