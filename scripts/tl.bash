# tl.bash: bash completion for tlcollect, tlstore and tlreport.
#
# Completes options (after a tlstore command, that command's own), tlstore's
# commands, probe names (tlcollect --list-probes) and labels read from the
# database (tlstore labels, honouring --db and TL_DB). Options and commands
# are read from each program's --help and each tlstore command's --help, so
# the completion cannot fall behind the programs. Installed as
# share/bash-completion/completions/{tlcollect,tlstore,tlreport}; without
# bash-completion, source this file from ~/.bashrc. Needs bash 4 or later.

# The program NAME next to the completed command CMD when CMD was typed with a
# folder (build/collector/tlcollect), else NAME from PATH.
_tl_sibling() {
  local dir=${1%/*}
  if [[ $1 == */* && -x $dir/$2 ]]; then
    printf '%s\n' "$dir/$2"
  else
    printf '%s\n' "$2"
  fi
}

# "OPTION VALUE-NAME" per option in CMD's --help ("--count N", "-n N",
# "--quiet "); with a second argument, the --help of that tlstore command.
_tl_help_options() {
  local line re='^ +(-([A-Za-z0-9]), )?--([a-z][a-z0-9-]*)([ =]([A-Z][A-Za-z=_]*))?'
  while IFS= read -r line; do
    if [[ $line =~ $re ]]; then
      printf -- '--%s %s\n' "${BASH_REMATCH[3]}" "${BASH_REMATCH[5]}"
      if [[ -n ${BASH_REMATCH[2]} ]]; then
        printf -- '-%s %s\n' "${BASH_REMATCH[2]}" "${BASH_REMATCH[5]}"
      fi
    fi
  done < <("$1" ${2:+"$2"} --help 2>/dev/null)
}

# The commands listed under "Commands:" in tlstore --help.
_tl_store_commands() {
  local line in=0
  while IFS= read -r line; do
    if [[ $line == Commands:* ]]; then
      in=1
    elif [[ $in == 1 && $line =~ ^\ \ ([a-z][a-z0-9-]*) ]]; then
      # A command starts two spaces in; deeper lines continue the one above.
      printf '%s\n' "${BASH_REMATCH[1]}"
    elif [[ $in == 1 && -z $line ]]; then
      break
    fi
  done < <("$1" --help 2>/dev/null)
}

# Labels in the database the command line points at (--db PATH or
# --db=PATH before the cursor, else TL_DB or the default).
_tl_labels() {
  local i db=
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == --db ]]; then
      db=${COMP_WORDS[i + 1]}
      [[ $db == = ]] && db=${COMP_WORDS[i + 2]}
    elif [[ ${COMP_WORDS[i]} == --db=* ]]; then
      db=${COMP_WORDS[i]#--db=}
    fi
  done
  [[ $db == \~/* ]] && db=$HOME/${db#\~/}
  "$(_tl_sibling "$1" tlstore)" ${db:+--db "$db"} labels 2>/dev/null
}

_tl_probes() {
  local name rest
  while read -r name rest; do
    printf '%s\n' "$name"
  done < <("$(_tl_sibling "$1" tlcollect)" --list-probes 2>/dev/null)
}

_tl_complete() {
  local cmd=$1 cur=${COMP_WORDS[COMP_CWORD]} prev=
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  local prog=${cmd##*/} subcmd= opts line i
  COMPREPLY=()
  # --option=VALUE: bash splits at '=', so "--db=" ends in the word "=" and
  # "--db=fo" has "=" just before the cursor.
  if [[ $cur == = ]]; then
    cur=
  elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi

  # tlstore: the first word that is neither an option nor --db's value is the
  # command; operands counts the words after it that are no options either.
  # After "--" nothing is an option any more.
  local after_dashes=0 w operands=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((!after_dashes)); then
      case $w in
      --)
        after_dashes=1
        continue
        ;;
      --db)
        ((i++))
        [[ ${COMP_WORDS[i]} == = ]] && ((i++))
        continue
        ;;
      -*) continue ;;
      esac
    fi
    if [[ $prog == tlstore && -z $subcmd ]]; then
      subcmd=$w
    else
      operands=$((operands + 1))
    fi
  done
  # Only a command tlstore lists is asked for its own --help.
  if [[ -n $subcmd ]] && ! _tl_store_commands "$cmd" | grep -qx -- "$subcmd"; then
    subcmd=
    return 0
  fi

  if ((!after_dashes)); then
    case $prev in
    --db | -o | --output)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
    -p | --probe)
      mapfile -t COMPREPLY < <(compgen -W "$(_tl_probes "$cmd")" -- "$cur")
      return 0
      ;;
    -l | --label)
      mapfile -t COMPREPLY < <(compgen -W "$(_tl_labels "$cmd")" -- "$cur")
      return 0
      ;;
    -c | --compare)
      # A comma-separated list: complete its last item with the labels it
      # does not name yet.
      local head= label left=
      [[ $cur == *,* ]] && head=${cur%,*},
      while read -r label; do
        [[ ,$head == *,"$label",* ]] || left+="$label "
      done < <(_tl_labels "$cmd")
      mapfile -t COMPREPLY < <(compgen -W "$left" -P "$head" -- "${cur##*,}")
      return 0
      ;;
    esac
    # Any other option that takes a value: nothing sensible to offer.
    while read -r opts line; do
      if [[ $opts == "$prev" && -n $line ]]; then
        return 0
      fi
    done < <(_tl_help_options "$cmd" ${subcmd:+"$subcmd"})
  fi

  if [[ $cur == -* ]] && ((!after_dashes)); then
    opts=$(_tl_help_options "$cmd" ${subcmd:+"$subcmd"} | while read -r o _; do
      [[ $o == --* ]] && printf '%s\n' "$o"
    done)
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
  elif [[ $prog == tlstore && ( -z $subcmd || ($subcmd == help && $operands == 0) ) ]]; then
    # The command, or the one "tlstore help" is asked about.
    mapfile -t COMPREPLY < <(compgen -W "$(_tl_store_commands "$cmd")" -- "$cur")
  fi
  return 0
}

complete -F _tl_complete tlcollect tlstore tlreport
