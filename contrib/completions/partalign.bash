# SPDX-License-Identifier: GPL-3.0-or-later
# bash completion for partalign(8); cmake --install puts it in
# share/bash-completion/completions/partalign.
# Hand-written, one case branch per subcommand: `opts` lists every option exactly as
# `partalign SUB --help` does, `valued` those that take a value; an option with fixed values
# also gets a line in the second case ("SUB:OPTION)"). tests/cli/contrib/completions_test.cc
# fails when a subcommand or an option of the real --help is missing here.
_partalign() {
  local cur prev words cword
  _init_completion || return
  local sub=partalign i
  for ((i = 1; i < cword; i++)); do
    if [[ ${words[i]} != -* ]]; then
      sub=${words[i]}
      break
    fi
  done
  local opts="" valued=""
  case "$sub" in
    partalign) opts="-h --help -V --version probe explain audit plan apply restore resume at-boot snapshot verify translate report bench move demo" ;;
    probe)
      opts="-h --help --assume --sector-size -J --json --list-profiles"
      valued="--assume --sector-size"
      ;;
    explain)
      opts="-h --help --assume --sector-size -J --json --size --label --tool-version --installer-version --no-cross-check --layout"
      valued="--assume --sector-size --size --label --tool-version --installer-version --layout"
      ;;
    audit)
      opts="-h --help --all --format -o --output --assume --sector-size -J --json --grain"
      valued="--format -o --output --assume --sector-size --grain"
      ;;
    plan)
      opts="-h --help --assume --sector-size -J --json --grain -o --output --format --layout --discard --no-scan --make-room --at-next-boot --interactive --label --backup-dir"
      valued="--assume --sector-size --grain -o --output --format --layout --discard --label --backup-dir"
      ;;
    apply)
      opts="-h --help --target --assume --sector-size -y --yes -n --dry-run --backup-dir -J --json --journal-dir --progress --discard --make-room --copy-all --way --allow-reinstall-bootloader --bench --bench-seconds --bench-report --at-next-boot --journal-partition --cancel-next-boot"
      valued="--target --assume --sector-size --backup-dir --journal-dir --discard --way --bench-seconds --bench-report --journal-partition"
      ;;
    restore)
      opts="-h --help --target --assume --sector-size -y --yes -n --dry-run --backup-dir --check"
      valued="--target --assume --sector-size --backup-dir"
      ;;
    resume)
      opts="-h --help --rollback --forget --device -y --yes --progress"
      valued="--device"
      ;;
    at-boot)
      opts="-h --help --finished"
      ;;
    snapshot)
      opts="-h --help --assume --sector-size -J --json -o --output"
      valued="--assume --sector-size -o --output"
      ;;
    verify)
      opts="-h --help --assume --sector-size -J --json --against"
      valued="--assume --sector-size --against"
      ;;
    translate)
      opts="-h --help --assume --sector-size -J --json --from-sector-size --accept -y --yes -n --dry-run --backup-dir"
      valued="--assume --sector-size --from-sector-size --accept --backup-dir"
      ;;
    report)
      opts="-h --help --assume --sector-size -o --output --format --grain --discard --no-scan --make-room --bench --bench-seconds --bench-json --against"
      valued="--assume --sector-size -o --output --format --grain --discard --bench-seconds --bench-json --against"
      ;;
    bench)
      opts="-h --help -J --json --budget --block-sizes --offset-aligns --pattern --block-size --offset-align --queue-depth --duration --write --rewrite --engine --seed --report --output --no-report --compare"
      valued="--budget --block-sizes --offset-aligns --pattern --block-size --offset-align --queue-depth --duration --engine --seed --report --output --compare"
      ;;
    move)
      opts="-h --help --from --to --length --journal --chunk --way --table-range --new-table --only-used --force -y --yes --progress"
      valued="--from --to --length --journal --chunk --way --table-range --new-table"
      ;;
    demo)
      opts="-h --help --dir --keep --ssd"
      valued="--dir"
      ;;
  esac
  case "$sub:$prev" in
    explain:--label) mapfile -t COMPREPLY < <(compgen -W "gpt dos" -- "$cur"); return ;;
    audit:--format) mapfile -t COMPREPLY < <(compgen -W "text json prometheus" -- "$cur"); return ;;
    plan:--format) mapfile -t COMPREPLY < <(compgen -W "text markdown json sfdisk" -- "$cur"); return ;;
    report:--format) mapfile -t COMPREPLY < <(compgen -W "html markdown" -- "$cur"); return ;;
    plan:--label) mapfile -t COMPREPLY < <(compgen -W "gpt dos" -- "$cur"); return ;;
    move:--way | apply:--way) mapfile -t COMPREPLY < <(compgen -W "auto copies ordered" -- "$cur"); return ;;
  esac
  if [[ " $valued " == *" $prev "* ]]; then
    _filedir
  elif [[ $cur == -* || $sub == partalign ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
  else
    _filedir
  fi
}
complete -F _partalign partalign
