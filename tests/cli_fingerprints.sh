#!/usr/bin/env bash
# What every command prints, hashed (stdout, stderr, exit code), one line a command: a refactoring leaves
# every line identical. Usage: bash tests/cli_fingerprints.sh [IDEMSIM] > file (IDEMSIM defaults to idemsim).
set -u
idemsim=${1:-idemsim}
export COLUMNS=80 NO_COLOR=1
commands=(
  "--help" "--version" "run --help" "plot --help" "explore --help" "sweep --help" "show --help" "compare --help"
  "list --help" "db --help" "db list --help" "db run --help" "db compare --help" "list" "list --lang ja" "db list"
  "db run article-wait-commit" "sweep loss --seeds 5" "explore same-tx" "explore naive"
  "run nosuch" "run lost-response --design nosuch" "run lost-response --set client.timeout=-1"
)
for s in $(ls scenarios/*.toml | xargs -n1 basename | sed 's/.toml$//'); do
  commands+=("run $s" "run $s --brief" "run $s --format json" "run $s --format mermaid" "run $s --lang ja"
             "show $s" "show $s --format mermaid" "compare $s")
done
for c in "${commands[@]}"; do
  out=$($idemsim $c 2>/tmp/cli_fp_err); rc=$?
  printf '%s\t%s\t%s\t%s\n' "$c" "$rc" "$(printf '%s' "$out" | sha256sum | cut -c1-16)" \
    "$(sha256sum < /tmp/cli_fp_err | cut -c1-16)"
done
