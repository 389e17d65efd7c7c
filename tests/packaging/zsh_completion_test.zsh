#!/usr/bin/env zsh
# Loads the zsh completion the build generated outside the completion system: compadd and _files
# are replaced by functions that print what they were given, and words/CURRENT are set the way
# zsh sets them on <TAB>. Checks the candidates offered (zsh's compadd then filters by prefix).
# Usage: zsh -f zsh_completion_test.zsh COMPLETION_FILE
file=$1
compadd() { [[ $1 == -- ]] && shift; print -r -- "$*"; }
_files() { print FILES; }
failures=0
expect() { # expect WANTED WORD...: WANTED is among what completing the last word offers
  local wanted=$1
  shift
  words=("$@")
  CURRENT=$#words
  local got=" $(_lume_unlock) "
  if [[ $got == *" $wanted "* ]]; then
    print -r -- "ok:   '$*<TAB>' offers '$wanted'"
  else
    print -r -- "FAIL: '$*<TAB>' offered '$got', not '$wanted'"
    (( failures++ ))
  fi
}
words=(lume-unlock "")
CURRENT=2
source "$file" >/dev/null || { print "cannot load $file"; exit 1 }
expect allow lume-unlock al
expect --recipe lume-unlock create --rec
expect add lume-unlock allow a
expect FILES lume-unlock create --recipe ""
expect --program lume-unlock --json allow add vm1 --pro
exit $(( failures > 0 ))
