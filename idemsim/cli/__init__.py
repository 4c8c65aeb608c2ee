"""The ``idemsim`` command line, on top of everything (`app`: the commands; `db`: ``idemsim db …``; `common`: the
language and the one-line errors every command shares; `json_stream`: ``--format json`` written as runs go).
Nothing imports it; each command imports what it runs only when it runs, so ``idemsim run`` starts fast.
"""
