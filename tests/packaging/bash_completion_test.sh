#!/usr/bin/env bash
# Sources the bash completion the build generated and drives its `complete -F` function the way
# bash does on <TAB>: COMP_WORDS and COMP_CWORD in, COMPREPLY out.
# Usage: bash_completion_test.sh COMPLETION_FILE
set -uo pipefail
source "$1"
spec=$(complete -p lume-unlock) || { echo "no completion registered for lume-unlock"; exit 1; }
function=$(sed -n 's/.*-F \([^ ]*\) .*/\1/p' <<<"$spec")

failures=0
expect() { # expect "WANTED" WORD...: completing the last word gives exactly WANTED
  local wanted=$1
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  "$function"
  local got="${COMPREPLY[*]}"
  if [ "$got" != "$wanted" ]; then
    echo "FAIL: '$*<TAB>' gave '$got', wanted '$wanted'"
    failures=$((failures + 1))
  else
    echo "ok:   '$*<TAB>' -> '$got'"
  fi
}

expect "allow" lume-unlock al
expect "--recipe" lume-unlock create --rec
expect "add" lume-unlock allow a
expect "push" lume-unlock bundle pu
expect "--program" lume-unlock --json allow add vm1 --pro
expect "--min-speedup" lume-unlock bench vm1 --min-s
expect "--host-json --host-run --host-perplexity" lume-unlock bench vm1 --host-
# The value of a global option is not a command: "allow" here is a state directory.
expect "" lume-unlock --state-dir allow zz-no-such-file
# Hidden commands are not offered.
expect "" lume-unlock completion
exit $((failures > 0))
