"""The timeline view: each trace event as one line a learner can read.

`rows` turns a trace into ``(time, src, dst, text)`` tuples, in trace order; it is plain text, with no
colours, so the terminal table, golden files and later diagram views all share the same wording.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from ..base.http import REASONS
from ..base.i18n import MESSAGES
from ..base.i18n import text as t
from ..model.db.sql import literal, sql_for
from ..model.trace import Event
from .names import amount_text, attempt_name, outcome_name, party_name
from .prose import cells


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _status(status: int | None, lang: str = "en") -> str:
    return t("tl.timeout", lang) if status is None else f"{status} {REASONS.get(status, '')}".rstrip()


def _fault(data: dict, lang: str = "en") -> str:
    return t("tl.fault", lang, n=data["fault"] + 1) if data.get("fault") is not None else t("tl.random_loss", lang)


_JSONB = re.compile(r"'(\{\"status\": \d+).*?'::jsonb")


def _sql(sql: str) -> str:
    """The statement as the timeline shows it: a stored response's JSON is cut after its status."""
    return _JSONB.sub(lambda m: f"'{m.group(1)}, …}}'::jsonb", sql)


def _db_result(d: dict, lang: str = "en") -> str:
    if d["error"]:
        out = t("tl.error", lang, code=d["error"])
    elif d["op"] == "select_key":
        row = d["row"]
        out = t("tl.no_row", lang) if row is None else _state(row["status"], lang) + (
            t("tl.row_response", lang, status=row["response"]["status"]) if row.get("response") else "")
    elif d["op"] == "count_charges":
        out = t("tl.count", lang, n=d["row"]["count"])
    elif d["op"] in ("lock_key", "claim_key") and d["row"] is not None:
        out = t("tl.row_at", lang, point=d["row"]["recovery_point"])
    elif d["rows"] is not None:
        out = t("tl.row", lang) if d["rows"] == 1 else t("tl.rows", lang, n=d["rows"])
        if d.get("id") is not None and d["op"] in ("register_key", "insert_key", "insert_charge"):
            out += t("tl.id", lang, id=d["id"])
    else:
        out = t("tl.ok", lang)
    if d.get("waited"):
        out += t("tl.waited", lang, seconds=d["waited"],
                 who=", ".join(party_name(p, lang) for p in d["blocked_by"]) or t("tl.another", lang))
    return out


def _state(status: str, lang: str) -> str:
    """A key record's status: in Japanese the article's 処理中 and 完了."""
    return t(f"state.{status}", lang) if lang != "en" and status in ("in_progress", "done") else status


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


def describe(e: Event, short: bool = False, lang: str = "en") -> str:
    """One event in words, in ``lang``; ``short`` gives statements as `short_sql` instead of their whole SQL."""
    d = e.data
    k = e.kind
    if k in ("db.wait", "db.result") and d["op"] != "disconnect":
        sql = short_sql(d["op"], d["fields"]) if short else _sql(sql_for(d["op"], d["fields"]))
        if k == "db.wait":
            return t("tl.db_wait", lang, sql=sql, holder=party_name(d["blocked_by"], lang))
        return t("tl.db_result", lang, sql=sql, result=_db_result(d, lang))
    if k == "db.result":
        return t("tl.disconnect", lang)
    if k == "op.start":
        body = f" {_json(d['body'])}" if d["body"] is not None else ""
        return t("tl.op_start", lang, op=d["op"], method=d["method"], path=d["path"], body=body)
    if k == "attempt.send":
        key = t("tl.key", lang, key=d["key"]) if d["key"] else t("tl.no_key", lang)
        return t("tl.send", lang, method=d["method"], path=d["path"], key=key, attempt=attempt_name(d["attempt"], lang),
                 request=d["request"])
    if k in ("request.lost", "response.lost"):
        return t(f"tl.{k.split('.')[0]}_lost", lang, request=d["request"], fault=_fault(d, lang))
    if k == "request.arrive":
        return t("tl.arrive", lang, request=d["request"], handler=party_name(d["handler"], lang))
    if k == "request.refused":
        return t("tl.refused", lang, request=d["request"])
    if k == "api.sleep":
        return t("tl.sleep", lang, what=d["what"], seconds=d["seconds"])
    if k.startswith(("processor.", "completer.")):
        return _processor(k, d, lang)
    if k == "api.crash":
        return t("tl.crash", lang, point=d["point"], seconds=d["restart_after"])
    if k == "api.died":
        return t("tl.died", lang, request=d["request"])
    if k == "api.restart":
        return t("tl.restart", lang)
    if k == "response.send":
        replay = t("tl.replayed", lang) if d["replay"] else ""
        body = f" {_json(d['body'])}" if d["body"] is not None else ""
        return t("tl.response", lang, status=_status(d["status"], lang), body=body, replay=replay,
                 request=d["request"])
    if k == "response.dropped":
        return t("tl.dropped", lang, request=d["request"], status=_status(d["status"], lang))
    if k == "gateway.timeout":
        return t("tl.gateway_timeout", lang, seconds=d["after"], request=d["request"])
    if k == "gateway.unavailable":
        return t("tl.unavailable", lang, request=d["request"])
    if k == "response.arrive":
        key = "tl.arrives_ignored" if d["ignored"] else "tl.arrives"
        return t(key, lang, status=_status(d["status"], lang), request=d["request"])
    if k == "attempt.timeout":
        return t("tl.attempt_timeout", lang, request=d["request"], seconds=d["after"])
    if k == "attempt.end":
        return t("tl.attempt_end", lang, attempt=attempt_name(d["attempt"], lang), op=d["op"],
                 outcome=outcome_name(d["outcome"], lang), status=_status(d["status"], lang))
    if k == "client.backoff":
        return t("tl.backoff", lang, seconds=d["seconds"])
    if k == "client.give_up":
        reason = f"tl.reason.{d['reason']}"
        return t("tl.give_up", lang, op=d["op"], reason=t(reason, lang) if reason in MESSAGES else d["reason"])
    if k == "op.end":
        return t("tl.op_end", lang, op=d["op"], outcome=outcome_name(d["outcome"], lang),
                 status=_status(d["status"], lang), attempts=d["attempts"], s="s" if d["attempts"] != 1 else "")
    if k == "state.change":
        return t("tl.state", lang, resource=d["resource"], before=_json(d["before"]), after=_json(d["after"]))
    if k == "pool.wait":
        return t("tl.pool_wait", lang, queued=d["queued"])
    if k == "pool.acquire":
        return t("tl.pool_acquire", lang, seconds=d["waited"])
    return f"{k} {_json(d)}"


def _processor(k: str, d: dict, lang: str = "en") -> str:
    """The payment processor's events, and the completer's."""
    if k == "processor.call":
        key = t("tl.processor_key", lang, key=d["key"]) if d["key"] else t("tl.processor_no_key", lang)
        request = t("tl.call_for", lang, request=d["request"]) if d["request"] else ""
        return t("tl.call", lang, amount=amount_text(d["amount"], lang), key=key, request=request)
    if k == "processor.lookup":
        return t("tl.lookup", lang, key=d["key"])
    if k == "processor.capture":
        return t("tl.capture", lang, amount=amount_text(d["amount"], lang), capture=d["capture"])
    if k == "processor.replay":
        return t("tl.replay", lang, key=d["key"], capture=d["capture"] or t("tl.first_answer", lang))
    if k == "processor.in_use":
        return t("tl.in_use", lang, key=d["key"])
    if k == "processor.decline":
        return t("tl.decline", lang, fault=_fault(d, lang))
    if k == "processor.refuse":
        return t("tl.refuse", lang, key=d["key"], first=amount_text(d["first"], lang),
                 amount=amount_text(d["amount"], lang))
    if k == "processor.answer":
        what = t(f"tl.answer.{d['outcome']}", lang, capture=d["capture"])
        return what + (t("tl.a_replay", lang) if d["replayed"] else "")
    if k == "processor.lost":
        return t("tl.processor_lost", lang, handler=party_name(d["dst"], lang), fault=_fault(d, lang))
    if k == "processor.timeout":
        return t("tl.processor_timeout", lang, seconds=d["after"])
    if k == "processor.ignored":
        return t("tl.processor_ignored", lang)
    if k == "completer.finish":
        return t("tl.finish", lang, key=d["key"], status=_status(d["status"], lang))
    if k == "completer.release":
        return t("tl.release", lang, key=d["key"], reason=d["reason"])
    return f"{k} {_json(d)}"


def endpoints(e: Event) -> tuple[str, str]:
    """``(from, to)`` of an event; messages show both ends, local events only the actor."""
    if e.kind in ("request.lost", "response.lost", "processor.lost"):
        return e.data["src"], e.data["dst"]
    return e.actor, e.target or ""


def who(e: Event, lang: str = "en", names: dict[str, str] | None = None) -> str:
    """Who did it, and to whom, by their display names: ``API #1 → DB``, ``client``; from ``names`` (a scene's
    ``parties``) when given, else `names.party_name`."""
    src, dst = endpoints(e)

    def name(party: str) -> str:
        return (names or {}).get(party) or party_name(party, lang)

    return f"{name(src)} → {name(dst)}" if dst else name(src)


def rows(events: Iterable[Event], lang: str = "en") -> list[tuple[str, str, str]]:
    """Each event as ``(time, who, what)``: the time to the millisecond, `who` and `describe`."""
    return [(f"{e.t:8.3f}", who(e, lang), describe(e, lang=lang)) for e in events]


def plain(events: Iterable[Event], lang: str = "en") -> str:
    """The timeline as fixed-width text, its who column as wide as its widest name (golden files compare this);
    no line ends in a space."""
    table = rows(events, lang)
    width = max((cells(w) for _, w, _ in table), default=0)
    return "".join(f"{at}  {w}{' ' * (width - cells(w))}  {text}".rstrip() + "\n" for at, w, text in table)
