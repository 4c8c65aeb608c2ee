// Parse Mermaid diagrams with Mermaid's own parser (the version pinned in package-lock.json).
// Input on stdin: a JSON array of diagram texts. Output on stdout: a JSON array, one entry per diagram:
// {"ok": true, "type": "sequence"} or {"ok": false, "error": "first line of Mermaid's message"}.
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');

let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const text of JSON.parse(input)) {
  try {
    const parsed = await mermaid.parse(text);
    results.push({ ok: true, type: parsed.diagramType });
  } catch (error) {
    results.push({ ok: false, error: String(error.message || error).split('\n').slice(0, 3).join(' ') });
  }
}
process.stdout.write(JSON.stringify(results));
