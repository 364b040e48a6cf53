#!/bin/sh
# Prints the cases the test programs skipped, one summary line per program
# (written by tests/support.c into the folder $1), and exits 77 -- ctest's
# "Skipped" -- when there are any, so that a plain ctest run shows that some
# cases did not run. `ctest -R skipped_cases -V` shows which and why; the
# README lists the optional tool each needs.
dir=$1
found=0
for f in "$dir"/*.txt; do
  [ -s "$f" ] || continue
  cat "$f"
  found=1
done
if [ "$found" = 1 ]; then
  exit 77
fi
echo "no case was skipped"
