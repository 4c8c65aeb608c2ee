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
}
"""message id -> {language -> format string}."""


def language(lang: str | None = None) -> str:
    """The language to use: ``lang`` if given, else ``IDEMSIM_LANG``, else English."""
    chosen = lang or os.environ.get("IDEMSIM_LANG") or "en"
    return chosen if chosen in LANGS else "en"


def text(message: str, lang: str | None = None, **fields) -> str:
    """The message ``message`` in ``lang``, its fields filled in."""
    return MESSAGES[message][language(lang)].format(**fields)
