#!/usr/bin/env bash
# Puts a benchmark report's figures into docs/BENCHMARKS.md: replaces what lies between
# <!-- results:start --> and <!-- results:end --> with the report's run information, its
# Targets table and the contenders it lists as left out or incomplete (the scenarios' own
# tables stay in the report). benchmarks/run.sh --update-docs calls it
# after a run; it can also be run on its own:
#
#   benchmarks/update-docs.sh [report] [doc]
#
# (defaults: benchmarks/target/benchmark-results.md, docs/BENCHMARKS.md). A report of a smoke
# run is refused: its figures measure nothing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
report="${1:-$here/target/benchmark-results.md}"
doc="${2:-$(dirname "$here")/docs/BENCHMARKS.md}"

python3 - "$report" "$doc" <<'PY'
import re
import sys

report_path, doc_path = sys.argv[1], sys.argv[2]
START, END = "<!-- results:start -->", "<!-- results:end -->"

with open(report_path, encoding="utf-8") as f:
    lines = f.read().splitlines()
if any("**Smoke sizes.**" in line for line in lines) or any(
        line.startswith("| sizes | smoke sizes") for line in lines):
    sys.exit("update-docs: %s is a smoke run's report; its figures measure nothing" % report_path)


def table_at(start):
    """The table whose first line is at or after start, and the index after it."""
    i = start
    while i < len(lines) and not lines[i].startswith("|"):
        if lines[i].startswith("## "):
            return [], i
        i += 1
    table = []
    while i < len(lines) and lines[i].startswith("|"):
        table.append(lines[i])
        i += 1
    return table, i


info, i = table_at(0)
if not info or not any(line.startswith("| date |") for line in info):
    sys.exit("update-docs: %s has no run information table" % report_path)

out = [START,
       "<!-- Written by benchmarks/update-docs.sh from benchmarks/target/benchmark-results.md; "
       "not edited by hand. -->", ""]
out += info + [""]

sections = [n for n in range(len(lines)) if lines[n].startswith("## ")]
targets, flags = None, []
for n in sections:
    heading = lines[n][3:].strip()
    end = next((m for m in sections if m > n), len(lines))
    if heading == "Targets":
        targets, _ = table_at(n + 1)
        continue
    # what keeps a figure from being read as complete: contenders left out or incomplete
    flags += ["- %s: %s" % (heading.split(" ", 1)[0], line[2:]) for line in lines[n + 1:end]
              if line.startswith("- **Incomplete:**") or re.match(r"- \*\*.+ left out:\*\*", line)]
if not targets:
    sys.exit("update-docs: %s has no Targets table" % report_path)
out += ["**Targets**", ""] + targets + [""]
if flags:
    out += flags + [""]
out.append(END)

with open(doc_path, encoding="utf-8") as f:
    doc = f.read()
if doc.count(START) != 1 or doc.count(END) != 1 or doc.index(START) > doc.index(END):
    sys.exit("update-docs: %s needs one %s and one %s after it" % (doc_path, START, END))
before, rest = doc.split(START, 1)
after = rest.split(END, 1)[1]
with open(doc_path, "w", encoding="utf-8") as f:
    f.write(before + "\n".join(out) + after)
print("update-docs: wrote the figures of %s into %s" % (report_path, doc_path))
PY
