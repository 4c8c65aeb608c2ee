// idemsim's engine in a Web Worker (a module worker, started by engine.js on a static site built by
// `idemsim site DIR`): Pyodide from ./pyodide/, the wheels from ./wheels/, then idemsim.web.engine.handle.
//
// Guarantees: nothing is fetched from another host. Pyodide's files come from the site's pyodide/ directory
// (indexURL), the packages from the site's own Pyodide lockfile (wheels/pyodide-lock.json, which names exactly
// the wheels of engine.json with their sha256: Pyodide checks each download against it) and packageBaseUrl is
// the site's wheels/ directory, so Pyodide's CDN is never asked. The page never freezes: all Python runs here.
//
// Messages in:  {id, path, query}   path "/api/catalog" | "/api/run" | "/api/compare"; query: {name: string}
// Messages out: {progress: fraction 0..1, stage, words}   while loading (stage: "download", "python",
//                                                          "packages", "idemsim", "warm", "ready", or
//                                                          "failed"; words: English)
//               {id, status, body}   the engine's answer: status 200 and its JSON, 400 and {error: line};
//                                    500 and {error: line} when the engine could not start or failed
// Requests sent before the engine is ready wait for it.

const here = new URL(".", self.location.href);

function progress(fraction, stage, words) {
  self.postMessage({progress: fraction, stage, words});
}

function oneLine(error) {
  const text = String(error && error.message ? error.message : error).trim();
  const lines = text.split("\n").map((line) => line.trim()).filter(Boolean);
  return lines.length ? lines[lines.length - 1] : "the engine failed";
}

async function start() {
  progress(0, "download", "Downloading Python and idemsim");
  const answer = await fetch(new URL("engine.json", here));
  if (!answer.ok) throw new Error(`engine.json: HTTP ${answer.status}`);
  const config = await answer.json();
  const indexURL = new URL(config.pyodide, here).href;
  const lockFileURL = new URL(config.lock, here).href;
  const packageBaseUrl = new URL(".", lockFileURL).href;
  // The downloads first, all at once, counted against engine.json's "bytes", so that the bar moves while a slow
  // network brings the 16 MB; Pyodide's own requests for the same files then come from the browser's cache.
  const files = [...config.fetch.map((name) => new URL(name, indexURL).href),
    ...config.wheels.map((name) => new URL(name, here).href)];
  let received = 0;
  let shown = 0;
  await Promise.all(files.map(async (url) => {
    const answer = await fetch(url);
    if (!answer.ok) throw new Error(`${url}: HTTP ${answer.status}`);
    const reader = answer.body.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      received += chunk.value.length;
      const fraction = 0.05 + 0.45 * Math.min(1, received / config.bytes);
      if (fraction - shown >= 0.01) {
        shown = fraction;
        progress(fraction, "download", "Downloading Python and idemsim");
      }
    }
  }));
  progress(0.5, "python", "Starting Python (Pyodide)");
  const {loadPyodide} = await import(new URL("pyodide.mjs", indexURL).href);
  const pyodide = await loadPyodide({indexURL, lockFileURL, packageBaseUrl, stdout: () => {}, stderr: () => {}});
  progress(0.6, "packages", "Installing simpy, pydantic and idemsim");
  const names = config.wheels.map((wheel) => wheel.split("/").pop().split("-")[0].replace(/[-_.]+/g, "-")
    .toLowerCase());
  const failures = [];
  await pyodide.loadPackage(names, {messageCallback: () => {}, errorCallback: (line) => failures.push(line)});
  if (failures.length) throw new Error(failures[failures.length - 1]);
  progress(0.8, "idemsim", "Starting idemsim");
  pyodide.runPython(`
import json
from idemsim.web.engine import handle as _handle

def _idemsim_call(path, query):
    status, body = _handle(path, json.loads(query))
    return json.dumps([status, body], ensure_ascii=False)
`);
  const call = pyodide.globals.get("_idemsim_call");
  progress(0.9, "warm", "Warming up: the first run");
  call("/api/run", JSON.stringify({scenario: "lost-response"}));
  progress(1, "ready", "Ready");
  return call;
}

const engine = start();
engine.catch((error) => progress(1, "failed", oneLine(error)));

self.onmessage = async (event) => {
  const {id, path, query} = event.data;
  let call;
  try {
    call = await engine;
  } catch (error) {
    self.postMessage({id, status: 500, body: {error: `the engine could not start: ${oneLine(error)}`}});
    return;
  }
  try {
    const [status, body] = JSON.parse(call(path, JSON.stringify(query || {})));
    self.postMessage({id, status, body});
  } catch (error) {
    self.postMessage({id, status: 500, body: {error: oneLine(error)}});
  }
};
