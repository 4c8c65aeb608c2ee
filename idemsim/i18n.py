"""Every word idemsim shows a reader, in English and in Japanese: one catalogue, two languages.

The catalogue is a plain table (`MESSAGES`: message id -> {language -> text}); a message is a Python format
string whose fields are filled by `text`. A plain table rather than gettext: idemsim ships two languages whose
texts are written by the same people as the code, the table needs no build step or binary catalogue, and a test
can check, by reading one dict, that no message exists in one language only. The Japanese texts use the
article's own terms (冪等キー, 一意制約, 処理中, 完了, 課金, 再送 …); where the article has none, the glossary
``docs/ja/glossary.md`` fixes one.

The language is chosen per call (``lang``), by ``--lang`` on the command line, or by ``IDEMSIM_LANG``;
English is the default.
"""

from __future__ import annotations

import os

LANGS = ("en", "ja")
"""The languages every message exists in."""

MESSAGES: dict[str, dict[str, str]] = {
    # the parties
    "party.client": {"en": "client", "ja": "クライアント"},
    "party.api": {"en": "API", "ja": "決済 API"},
    "party.db": {"en": "DB", "ja": "DB"},
    "party.processor": {"en": "processor", "ja": "決済代行"},
    "party.completer": {"en": "completer", "ja": "完了処理"},
    "party.net": {"en": "network", "ja": "ネットワーク"},
    # the key record's states
    "state.absent": {"en": "absent", "ja": "未登録"},
    "state.in_progress": {"en": "in_progress", "ja": "処理中"},
    "state.done": {"en": "done", "ja": "完了"},
    # the money
    "money.charge": {"en": "charge", "ja": "課金"},
    "money.charges": {"en": "charges recorded {n}", "ja": "課金の記録 {n} 件"},
    "money.captures": {"en": "money captured {n}", "ja": "決済代行の売上 {n} 件"},
    "money.capture": {"en": "capture {id}", "ja": "売上 {id}"},
    # messages and events
    "event.lost": {"en": "lost", "ja": "失われる"},
    "event.retry": {"en": "retry", "ja": "再送"},
    "event.wait": {"en": "waits {seconds}", "ja": "{seconds} 待たされる"},
    "event.crash": {"en": "crash", "ja": "プロセスが落ちる"},
    "event.restart": {"en": "restart", "ja": "再起動"},
    "event.commit": {"en": "COMMIT", "ja": "COMMIT"},
    "event.rollback": {"en": "ROLLBACK", "ja": "ROLLBACK"},
    "event.timeout": {"en": "timeout", "ja": "タイムアウト"},
    "event.replay": {"en": "replayed", "ja": "保存済みの応答"},
    "outcome.ok": {"en": "ok", "ja": "成功"},
    "outcome.fail": {"en": "fail", "ja": "失敗"},
    "outcome.info": {"en": "unknown", "ja": "不明"},
    "seconds": {"en": "{s:.1f} s", "ja": "{s:.1f} 秒"},
    # Mermaid sequence diagrams (idemsim.views.mermaid): statements, messages and notes
    "mm.disconnect": {"en": "the connection drops", "ja": "接続が切れる"},
    "mm.register": {"en": "register {key}", "ja": "{key} を登録"},
    "mm.insert_key": {"en": "insert {key}", "ja": "{key} を挿入"},
    "mm.select": {"en": "read {key}", "ja": "{key} を読む"},
    "mm.store": {"en": "store the {status} answer", "ja": "応答 {status} を保存"},
    "mm.delete": {"en": "delete {key}", "ja": "{key} を削除"},
    "mm.delete_expired": {"en": "delete expired keys", "ja": "期限切れのキーを削除"},
    "mm.charge": {"en": "record a charge of {amount}", "ja": "{amount} 円の課金を記録"},
    "mm.lock": {"en": "lock {key} (FOR UPDATE)", "ja": "{key} をロック (FOR UPDATE)"},
    "mm.claim": {"en": "claim {key}", "ja": "{key} を確保"},
    "mm.point": {"en": "recovery point {point}", "ja": "回復地点 {point}"},
    "mm.no_row": {"en": "no row", "ja": "行なし"},
    "mm.rows": {"en": "{n} rows", "ja": "{n} 行"},
    "mm.row": {"en": "1 row", "ja": "1 行"},
    "mm.retry_suffix": {"en": " (retry)", "ja": "（再送）"},
    "mm.request_lost": {"en": "the request is lost", "ja": "要求がネットワークで失われる"},
    "mm.response_lost": {"en": "the answer is lost on the network", "ja": "応答がネットワークで失われる"},
    "mm.from_gateway": {"en": " (from the gateway)", "ja": "（ゲートウェイから）"},
    "mm.replayed": {"en": " (replayed)", "ja": "（保存済みの応答）"},
    "mm.no_answer": {"en": "no answer within {seconds}", "ja": "{seconds}待っても応答がない"},
    "mm.give_up": {"en": "gives up", "ja": "諦める"},
    "mm.waits": {"en": "{who} waits on the unique index for {holder}",
                 "ja": "{who} は一意制約の検査で {holder} の確定まで待たされる"},
    "mm.after_wait": {"en": "after {seconds}", "ja": "{seconds}後"},
    "mm.capture": {"en": "capture {amount}", "ja": "{amount} 円の売上確定"},
    "mm.lookup": {"en": "what became of this key?", "ja": "このキーの結果は？"},
    "mm.captured": {"en": "captured {capture}", "ja": "売上確定 {capture}"},
    "mm.declined": {"en": "declined", "ja": "拒否"},
    "mm.in_use": {"en": "409 key in use", "ja": "409 キーが使用中"},
    "mm.not_found": {"en": "no call with this key", "ja": "このキーの要求はない"},
    "mm.replayed_capture": {"en": " (a replay: nothing captured)", "ja": "（再送への応答: 新たな売上確定なし）"},
    "mm.processor_timeout": {"en": "no answer from the processor within {seconds}",
                             "ja": "決済代行から {seconds}待っても応答がない"},
    "mm.captures": {"en": "money captured {n}", "ja": "売上確定 {n} 件"},
    "mm.capture_note": {"en": "captures {amount} as {capture}", "ja": "{amount} 円を売上確定（{capture}）"},
    "mm.charges": {"en": "charges recorded {n}", "ja": "課金の記録 {n} 件"},
    "mm.client_ended": {"en": "{client} ends {outcome} {status}", "ja": "{client}は{outcome} {status} で終わる"},
    "mm.crash": {"en": "the API process dies ({point})", "ja": "API のプロセスが落ちる（{point}）"},
    "mm.restart": {"en": "the API process is back", "ja": "API のプロセスが戻る"},
    "mm.completer_finish": {"en": "finishes {key}", "ja": "{key} を完了させる"},
    "mm.completer_release": {"en": "releases {key}", "ja": "{key} を解放する"},
    # sweeps (idemsim.views.sweep_plot)
    "sweep.subtitle": {"en": "{seeds} runs a point; the bands are 95 % intervals",
                       "ja": "1 点につき {seeds} 回の実行。帯は 95 % 区間"},
    "sweep.time": {"en": "simulated time (s)", "ja": "シミュレーション時刻 (秒)"},
    "sweep.attempts_per_second": {"en": "attempts per second", "ja": "1 秒あたりの送信数"},
    "load.title": {"en": "{name} — design {design} — seed {seed}: {n} operations",
                   "ja": "{name}　設計: {design}　シード: {seed}　操作 {n} 件"},
    "load.all": {"en": "every attempt", "ja": "すべての送信"},
    "load.outcome": {"en": "attempts that ended {outcome}", "ja": "結果が{outcome}の送信"},
    "load.outage": {"en": "the API is unreachable", "ja": "API に到達できない"},
    "load.verdict": {"en": "charges recorded {charges} · money captured {captures} · properties broken {broken}",
                     "ja": "課金の記録 {charges} 件 · 売上 {captures} 件 · 破れた性質 {broken} 件"},
    "sweep.series_subtitle": {"en": "the mean of {seeds} runs a point, in windows of 1 s",
                               "ja": "1 点につき {seeds} 回の実行の平均、1 秒ごとの区間"},
    "sweep.peak_after": {"en": "{label}  →  {peak:g}/s at the peak after the outage",
                         "ja": "{label}  →  障害後の最大 {peak:g} 回/秒"},
    "sweep.double_charge": {"en": "double charge (rate)", "ja": "二重課金の割合"},
    "sweep.double_capture": {"en": "double capture (rate)", "ja": "二重売上の割合"},
    "sweep.lost_charge": {"en": "ok without a charge (rate)", "ja": "課金なしの成功の割合"},
    "sweep.client_wrong": {"en": "client wrong (rate)", "ja": "クライアントの誤認の割合"},
    "sweep.gave_up_unknowing": {"en": "gave up not knowing (rate)", "ja": "結果不明のまま諦めた割合"},
    "sweep.saw_409": {"en": "saw a 409 (rate)", "ja": "409 を受けた割合"},
    "sweep.stuck_key": {"en": "stuck key (rate)", "ja": "処理中のまま残ったキーの割合"},
    "sweep.orphan": {"en": "ledgers disagree (rate)", "ja": "記録と売上の食い違いの割合"},
    "sweep.time_to_answer.p95": {"en": "time to the final answer, p95 (s)", "ja": "最終応答までの時間 p95 (秒)"},
    "sweep.time_to_answer.p50": {"en": "time to the final answer, p50 (s)", "ja": "最終応答までの時間 p50 (秒)"},
    "sweep.zero": {"en": "0 at every point: {designs}", "ja": "すべての点で 0: {designs}"},
    "sweep.attempts": {"en": "attempts per purchase", "ja": "1 件の購入あたりの送信数"},
    "sweep.keys_held": {"en": "key records held at the end", "ja": "最後に残ったキーの記録数"},
    "sweep.waiting_peak.max": {"en": "connections held by waiting duplicates (peak)",
                               "ja": "待たされている処理が握る接続数（最大）"},
    "sweep.pool_wait_max.p95": {"en": "longest wait for a connection, p95 (s)",
                                "ja": "接続待ちの最長時間 p95 (秒)"},
    # the key record's state diagram
    "st.registered": {"en": "the key's registration commits", "ja": "キーの登録が確定"},
    "st.completed": {"en": "the charge and the stored answer commit", "ja": "業務処理と応答の保存が確定"},
    "st.rolled_back": {"en": "rolled back, released, or expired", "ja": "失敗で巻き戻る、解放、または期限切れ"},
    "st.expired": {"en": "the retention passes, the record is deleted", "ja": "保持期限を過ぎて記録を削除"},
    "st.taken": {"en": " (taken {n}×)", "ja": "（この実行で {n} 回）"},
    "st.no_key": {"en": "this run sends no key", "ja": "この実行はキーを送らない"},
    # the figure (idemsim.views.figure): lanes, labels, legend, verdict
    "party.gateway": {"en": "gateway", "ja": "ゲートウェイ"},
    "party.handler": {"en": "API #{n}", "ja": "決済 API #{n}"},
    "party.duplicate": {"en": "{client} (duplicate)", "ja": "{client} (重複)"},
    "party.recovery": {"en": "recovery", "ja": "回収処理"},
    "party.reaper": {"en": "reaper", "ja": "期限切れ削除"},
    "figure.title": {"en": "{story} — design {design} — seed {seed}", "ja": "{story}　設計: {design}　シード: {seed}"},
    "figure.compare_title": {"en": "{story} — the same faults under each design — seed {seed}",
                             "ja": "{story}　同じ障害を設計ごとに　シード: {seed}"},
    "figure.time": {"en": "simulated time (s)", "ja": "シミュレーション時刻 (秒)"},
    "figure.retry": {"en": "retry {n}", "ja": "再送 {n}"},
    "figure.key": {"en": "key {key}", "ja": "キー {key}"},
    "figure.no_key": {"en": "no key", "ja": "キーなし"},
    "figure.dropped": {"en": "{status} dropped", "ja": "{status} 破棄"},
    "figure.ignored": {"en": "{status} ignored", "ja": "{status} 無視"},
    "figure.refused": {"en": "no answer", "ja": "応答なし"},
    "figure.lookup": {"en": "lookup", "ja": "照会"},
    "figure.declined": {"en": "declined", "ja": "拒否"},
    "figure.in_use": {"en": "key in use", "ja": "キー使用中"},
    "figure.not_found": {"en": "not found", "ja": "該当なし"},
    "figure.charge": {"en": "charge {id}", "ja": "課金 {id}"},
    "figure.rolled_back": {"en": "{id} rolled back", "ja": "{id} 取り消し"},
    "figure.finish": {"en": "finishes {status}", "ja": "{status} で完了"},
    "figure.release": {"en": "releases the key", "ja": "キーを解放"},
    "figure.give_up": {"en": "gives up", "ja": "諦める"},
    "figure.state": {"en": "{resource} = {value}", "ja": "{resource} = {value}"},
    "figure.deleted": {"en": "{resource} deleted", "ja": "{resource} 削除"},
    "figure.balance": {"en": "balance", "ja": "残高"},
    "figure.item": {"en": "item {name}", "ja": "アイテム {name}"},
    "legend.request": {"en": "request", "ja": "リクエスト"},
    "legend.response": {"en": "response", "ja": "応答"},
    "legend.processor": {"en": "to / from the processor", "ja": "決済代行との通信"},
    "legend.lost": {"en": "lost message", "ja": "失われたメッセージ"},
    "legend.statement": {"en": "SQL statement", "ja": "SQL 文"},
    "legend.transaction": {"en": "BEGIN … COMMIT", "ja": "BEGIN … COMMIT"},
    "legend.wait": {"en": "waits on the unique index", "ja": "一意制約で待たされる"},
    "legend.processing": {"en": "processor at work", "ja": "決済代行が処理中"},
    "legend.down": {"en": "API process down", "ja": "API プロセス停止中"},
    "verdict.seen": {"en": "{client} saw {seen} → {outcome}", "ja": "{client}が受け取った応答: {seen} → {outcome}"},
    "verdict.seen_op": {"en": "operation {op} ({client}) saw {seen} → {outcome}",
                        "ja": "操作 {op} ({client}) が受け取った応答: {seen} → {outcome}"},
    "legend.charge": {"en": "charge row in the DB", "ja": "DB の課金の記録"},
    "legend.capture": {"en": "money captured", "ja": "決済代行の売上"},
    "verdict.balance": {"en": "balance {n}", "ja": "残高 {n}"},
    "verdict.nothing": {"en": "nothing", "ja": "なし"},
    "verdict.all_hold": {"en": "all {n} properties hold", "ja": "性質 {n} 件すべて成立"},
    "verdict.broken": {"en": "broken: {names}", "ja": "破れた性質: {names}"},
    "property.at-most-one-charge": {"en": "one charge row at most", "ja": "課金の記録は高々 1 件"},
    "property.at-most-one-capture": {"en": "one capture at most", "ja": "売上は高々 1 件"},
    "property.exactly-one-on-success": {"en": "exactly one on success", "ja": "成功なら課金も売上もちょうど 1 件"},
    "property.ledger-agrees": {"en": "ledgers agree", "ja": "記録と売上が一致"},
    "property.replay-identical": {"en": "replays identical", "ja": "再送への応答が最初と同一"},
    "property.no-stuck-key": {"en": "no stuck key", "ja": "処理中のまま残るキーなし"},
    "property.client-view": {"en": "client never wrong", "ja": "クライアントの判断が正しい"},
}
"""message id -> {language -> format string}."""


def language(lang: str | None = None) -> str:
    """The language to use: ``lang`` if given, else ``IDEMSIM_LANG``, else English."""
    chosen = lang or os.environ.get("IDEMSIM_LANG") or "en"
    return chosen if chosen in LANGS else "en"


def text(message: str, lang: str | None = None, **fields) -> str:
    """The message ``message`` in ``lang``, its fields filled in."""
    return MESSAGES[message][language(lang)].format(**fields)
