# Completes command lines in one real interactive zsh (in a zpty) and prints, for each line, a
# `=== <line>` header and then every match completion offered.
# usage: zsh -f complete.zsh SCRIPT LINE...   (SCRIPT is sourced after compinit)
zmodload zsh/zpty zsh/zselect zsh/stat
local script=$1 out line n=0 hits=${TMPDIR:-/tmp}/zsh-complete-$$
shift
zpty z zsh -f -i
# Waits for a token the shell prints (computed, so the echoed command line never matches it).
sync() { zpty -w z "print S\$((${1}+1))YNC"; zpty -r z out "*S$(($1 + 1))YNC*" || exit 3 }
zpty -w z "LISTMAX=10000; autoload -U compinit && compinit -u -D && source ${(q)script}"
zpty -w z "compadd() { local -a __hits; builtin compadd -O __hits \"\$@\"; (( \$#__hits )) && print -rl -- \${^__hits} >> \$HITS; builtin compadd \"\$@\" }"
for line in "$@"; do
  n=$((n + 1))
  zpty -w z "HITS=${(q)hits}.$n"
  sync $((n * 10))
  zpty -w -n z "$line"$'\t'
  # Keys that arrive while a completion runs can make it stop early (a loaded machine delivers the TAB
  # and the next keys at once), so the next keys wait until its matches stop growing (at most 4 s: a
  # line with no match waits that long).
  local size=-1 last=-2 tries=0
  while (( tries++ < 200 )) && { (( size <= 0 )) || (( size != last )) }; do
    last=$size
    size=$(zstat +size $hits.$n 2>/dev/null || print 0)
    zselect -t 2
  done
  zpty -w -n z $'\C-u'
  sync $((n * 10 + 5))
done
zpty -d z
n=0
for line in "$@"; do
  n=$((n + 1))
  print -r -- "=== $line"
  [[ -f $hits.$n ]] && sort -u $hits.$n
  rm -f $hits.$n
done
