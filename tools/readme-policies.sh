#!/usr/bin/env bash
# Rewrite the README's policy table from the one definition in src/policy.rs
# (scx_wakeplace --list-policies --markdown). tests/cli.rs fails while the
# README differs.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/versions.env
export BPF_CLANG
cargo build --release -q -p scx_wakeplace
table=$(mktemp)
./target/release/scx_wakeplace --list-policies --markdown >"$table"
python3 - "$table" <<'PY'
import sys
table = open(sys.argv[1]).read()
begin = "<!-- policy table: written by `scx_wakeplace --list-policies --markdown`; tests/cli.rs checks it -->\n"
end = "<!-- policy table end -->"
s = open("README.md").read()
a, b = s.index(begin) + len(begin), s.index(end)
open("README.md", "w").write(s[:a] + table + s[b:])
PY
rm -f "$table"
echo "README.md: policy table rewritten"
