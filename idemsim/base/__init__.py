"""The foundation: what every floor above may use, and which imports nothing of idemsim's but itself.

`errors` (the errors a user can cause, said in their language), `i18n` (the catalogue: one JSON file per language
in ``messages/``), `http` (requests, responses, status classes), `fields` (the input's field types and the strict
base model), `printable` (text from the input made safe to print), `readers` (files, TOML and JSON documents) and
`paths` (where the shipped scenarios are).
"""
