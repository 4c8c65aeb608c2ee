// engine.js — a stand-in for the `idemsim serve` engine only (W2's engine.js, with Pyodide, replaces this file).
// Guarantees: `connect(onProgress)` resolves to {kind, catalog(lang), run(query), compare(query), embedded(query)};
// each of catalog/run/compare resolves to the engine's JSON or rejects with Error(<the engine's one line>);
// `embedded(query)` resolves to null here (a server answers at once).

function search(query) {
  return new URLSearchParams(query || {}).toString();
}

async function ask(path, query) {
  const response = await fetch(`api/${path}?${search(query)}`);
  let body;
  try {
    body = await response.json();
  } catch (e) {
    throw new Error(`${path}: HTTP ${response.status}`);
  }
  if (!response.ok) throw new Error(body && body.error ? body.error : `${path}: HTTP ${response.status}`);
  return body;
}

export async function connect(onProgress) {
  const response = await fetch("engine.json");
  if (!response.ok) throw new Error(`engine.json: HTTP ${response.status}`);
  const about = await response.json();
  if (onProgress) onProgress({ ready: true, kind: about.engine });
  return {
    kind: about.engine || "serve",
    catalog: (lang) => ask("catalog", { lang }),
    run: (query) => ask("run", query),
    compare: (query) => ask("compare", query),
    embedded: async () => null,
  };
}
