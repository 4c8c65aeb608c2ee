"""The timeline view: each trace event as one line a learner can read.

`rows` turns a trace into ``(time, src, dst, text)`` tuples, in trace order; it is plain text, with no
colours, so the terminal table, golden files and later diagram views all share the same wording.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from ..db.sql import literal, sql_for
from ..http import REASONS
from ..trace import Event


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _status(status: int | None) -> str:
    return "timeout" if status is None else f"{status} {REASONS.get(status, '')}".rstrip()


def _fault(data: dict) -> str:
    return f" (fault #{data['fault'] + 1})" if data.get("fault") is not None else " (random loss)"


_JSONB = re.compile(r"'(\{\"status\": \d+).*?'::jsonb")


def _sql(sql: str) -> str:
    """The statement as the timeline shows it: a stored response's JSON is cut after its status."""
    return _JSONB.sub(lambda m: f"'{m.group(1)}, …}}'::jsonb", sql)


def _db_result(d: dict) -> str:
    if d["error"]:
        out = f"ERROR {d['error']}"
    elif d["op"] == "select_key":
        row = d["row"]
        out = "no row" if row is None else f"{row['status']}" + (
            f", response {row['response']['status']}" if row.get("response") else "")
    elif d["op"] == "count_charges":
        out = f"count {d['row']['count']}"
    elif d["op"] in ("lock_key", "claim_key") and d["row"] is not None:
        out = f"1 row (at {d['row']['recovery_point']})"
    elif d["rows"] is not None:
        out = f"{d['rows']} row" + ("" if d["rows"] == 1 else "s")
        if d.get("id") is not None and d["op"] in ("register_key", "insert_key", "insert_charge"):
            out += f" (id {d['id']})"
    else:
        out = "ok"
    if d.get("waited"):
        out += f" after waiting {d['waited']:.3f} s for {', '.join(d['blocked_by']) or 'another transaction'}"
    return out


def short_sql(op: str, fields: dict | None) -> str:
    """A statement in a few words of SQL, for narrow views: ``INSERT key 'k-8f3a' ON CONFLICT DO NOTHING``.
    The full statement is in the JSON output, the golden timelines and ``idemsim db``."""
    f = fields or {}
    key = f"key {literal(f['key'])}" if "key" in f else ""
    match op:
        case "begin":
            isolation = f.get("isolation") or "read committed"
            return "BEGIN" if isolation == "read committed" else f"BEGIN {isolation.upper()}"
        case "commit" | "rollback":
            return op.upper()
        case "register_key":
            return f"INSERT {key} ON CONFLICT DO NOTHING"
        case "insert_key":
            return f"INSERT {key}"
        case "select_key":
            return f"SELECT {key}"
        case "complete_key":
            response = f.get("response") or {}
            return f"UPDATE {key} SET {f.get('status') or 'done'}, response {response.get('status', '')}".rstrip()
        case "delete_key":
            where = " in_progress" if f.get("status") else ""
            older = f" older than {f['created_before']:g} s" if f.get("created_before") is not None else ""
            return f"DELETE{where} {key}{older}"
        case "delete_expired":
            return "DELETE expired keys"
        case "insert_charge":
            return f"INSERT charge {literal(f.get('amount'))}" + (f" for {literal(f['key'])}" if f.get("key") else "")
        case "lock_key":
            return f"SELECT {key} FOR UPDATE"
        case "claim_key":
            return f"UPDATE {key} SET locked_at = now() (lease {f.get('lease', 0):g} s)"
        case "set_point":
            release = ", locked_at = NULL" if f.get("release") else ""
            return f"UPDATE {key} SET recovery_point = {literal(f.get('point'))}{release}"
    return sql_for(op, f)


def describe(e: Event, short: bool = False) -> str:
    """One event in words; ``short`` gives statements as `short_sql` instead of their whole SQL."""
    d = e.data
    k = e.kind
    if k in ("db.wait", "db.result") and short and d["op"] != "disconnect":
        sql = short_sql(d["op"], d["fields"])
        if k == "db.wait":
            return f"{sql}  ⏳ waits for {d['blocked_by']}'s transaction"
        return f"{sql}  → {_db_result(d)}"
    if k == "op.start":
        body = f" {_json(d['body'])}" if d["body"] is not None else ""
        return f"operation {d['op']} begins: {d['method']} {d['path']}{body}"
    if k == "attempt.send":
        key = f"  Idempotency-Key: {d['key']}" if d["key"] else "  (no Idempotency-Key)"
        return f"{d['method']} {d['path']}{key}  [attempt {d['attempt']}, request {d['request']}]"
    if k in ("request.lost", "response.lost"):
        return f"✗ the {k.split('.')[0]} of {d['request']} is lost{_fault(d)}"
    if k == "request.arrive":
        return f"request {d['request']} arrives; handler {d['handler']} takes it"
    if k == "request.refused":
        return f"request {d['request']} reaches a dead API process: no answer"
    if k == "db.wait":
        return f"{_sql(sql_for(d['op'], d['fields']))}  ⏳ waits for {d['blocked_by']}'s transaction"
    if k == "db.result" and d["op"] == "disconnect":
        return "the connection drops (PostgreSQL rolls back any open transaction)"
    if k == "db.result":
        return f"{_sql(sql_for(d['op'], d['fields']))}  → {_db_result(d)}"
    if k == "api.sleep":
        return f"{d['what']} ({d['seconds']:g} s)"
    if k.startswith(("processor.", "completer.")):
        return _processor(k, d)
    if k == "api.crash":
        return f"💥 the API process dies at {d['point']} (restarts in {d['restart_after']:g} s)"
    if k == "api.died":
        return f"the handler dies with the process; {d['request']} gets no answer"
    if k == "api.restart":
        return "the API process is back"
    if k == "response.send":
        replay = "  (replayed from the key record)" if d["replay"] else ""
        body = f" {_json(d['body'])}" if d["body"] is not None else ""
        return f"{_status(d['status'])}{body}{replay}  [to {d['request']}]"
    if k == "response.dropped":
        return f"the gateway already answered {d['request']}: it drops the late {_status(d['status'])}"
    if k == "gateway.timeout":
        return f"504 Gateway Timeout: no answer from the API within {d['after']:g} s  [to {d['request']}]"
    if k == "response.arrive":
        if d["ignored"]:
            return f"{_status(d['status'])} for {d['request']} arrives after the client stopped waiting: ignored"
        return f"{_status(d['status'])} for {d['request']} arrives"
    if k == "attempt.timeout":
        return f"no answer to {d['request']} within {d['after']:g} s"
    if k == "attempt.end":
        return f"attempt {d['attempt']} of operation {d['op']}: {d['outcome']} ({_status(d['status'])})"
    if k == "client.backoff":
        return f"backs off {d['seconds']:g} s before retrying"
    if k == "client.give_up":
        return f"gives up on operation {d['op']}: {d['reason']}"
    if k == "op.end":
        return (f"operation {d['op']} ends {d['outcome']} ({_status(d['status'])}) after {d['attempts']} "
                f"attempt{'s' if d['attempts'] != 1 else ''}")
    if k == "state.change":
        return f"{d['resource']}: {_json(d['before'])} → {_json(d['after'])}"
    return f"{k} {_json(d)}"


def _key(key: str | None) -> str:
    return f"Idempotency-Key: {key}" if key else "no Idempotency-Key"


def _processor(k: str, d: dict) -> str:
    """The payment processor's events, and the completer's."""
    if k == "processor.call":
        return f"capture {d['amount']}  {_key(d['key'])}" + (f"  [for {d['request']}]" if d["request"] else "")
    if k == "processor.lookup":
        return f"what became of key {d['key']}?"
    if k == "processor.capture":
        return f"captures {d['amount']} as {d['capture']} (money moves; nothing undoes it)"
    if k == "processor.replay":
        return f"has seen key {d['key']}: answers with {d['capture'] or 'its first answer'}, captures nothing"
    if k == "processor.in_use":
        return f"key {d['key']} is in use by a call still being processed: refuses this one"
    if k == "processor.decline":
        return f"declines the charge{_fault(d)}: nothing captured"
    if k == "processor.answer":
        what = {"captured": f"captured {d['capture']}", "declined": "declined", "in_use": "409 key in use",
                "not_found": "no call with this key"}[d["outcome"]]
        return what + (" (a replay)" if d["replayed"] else "")
    if k == "processor.lost":
        return f"✗ the processor's answer to {d['dst']} is lost{_fault(d)}"
    if k == "processor.timeout":
        return f"no answer from the processor within {d['after']:g} s: the money may have moved"
    if k == "processor.ignored":
        return f"the processor's answer arrives after the handler stopped waiting: ignored"
    if k == "completer.finish":
        return f"finishes key {d['key']}: stores {_status(d['status'])}"
    if k == "completer.release":
        return f"releases key {d['key']} ({d['reason']}): a retry starts afresh"
    return f"{k} {_json(d)}"


def endpoints(e: Event) -> tuple[str, str]:
    """``(from, to)`` of an event; messages show both ends, local events only the actor."""
    if e.kind in ("request.lost", "response.lost", "processor.lost"):
        return e.data["src"], e.data["dst"]
    return e.actor, e.target or ""


def rows(events: Iterable[Event]) -> list[tuple[str, str, str, str]]:
    return [(f"{e.t:8.3f}", *endpoints(e), describe(e)) for e in events]


def plain(events: Iterable[Event]) -> str:
    """The timeline as fixed-width text (golden files compare this)."""
    lines = []
    for t, src, dst, text in rows(events):
        arrow = f"{src} → {dst}" if dst else src
        lines.append(f"{t}  {arrow:<18}  {text}")
    return "\n".join(lines) + "\n"
