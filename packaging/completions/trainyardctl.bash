# bash completion for trainyardctl                       -*- shell-script -*-
# Commands, their options, run ids and names (from `trainyardctl ls --json`),
# node names (`trainyardctl node ls --json`) and job spec files (*.yaml, *.yml,
# *.py, *.sh). Needs nothing from bash-completion's library.

# The top-level "id" or "name" values of a pretty-printed --json array (8
# spaces of indentation: the keys of each element, not of nested objects).
_trainyardctl_json_field()
{
    sed -n 's/^        "'"$1"'": "\{0,1\}\([^",]*\)"\{0,1\},\{0,1\}$/\1/p'
}

_trainyardctl()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="validate submit ls show artifacts logs cancel metrics rm rename tag note archive unarchive
                    rerun import queue hold release priority top policy daemon node pipeline cache group help"
    # --db PATH (anywhere) is passed on to the look-ups below.
    local db=() cmd="" sub="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --db) db=(--db "${COMP_WORDS[i + 1]}"); ((i++)) ;;
            --db=*) db=(--db "${COMP_WORDS[i]#--db=}") ;;
            -*) ;;
            *) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; elif [[ -z $sub ]]; then sub=${COMP_WORDS[i]}; fi ;;
        esac
    done
    case $prev in
        --db|--download|--identity|--agent-path)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --node)
            COMPREPLY=($(compgen -W "$(trainyardctl "${db[@]}" node ls --json 2>/dev/null | _trainyardctl_json_field name)" -- "$cur"))
            return ;;
        --preemption)
            COMPREPLY=($(compgen -W "on off" -- "$cur")); return ;;
        --grace|--lines|--key|--param|--queue|--host|--user|--port|--label|--pipeline|--step|--older-than|--max-size) return ;;
    esac
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--db --help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi
    local opts=""
    case $cmd in
        submit) opts="--follow --node" ;;
        ls) opts="--json --archived" ;;
        show|queue) opts="--json" ;;
        artifacts) opts="--download --to-results" ;;
        logs) opts="--follow" ;;
        cancel) opts="--grace" ;;
        metrics) opts="--csv --json --key" ;;
        rerun) opts="--param --node --follow" ;;
        policy) opts="--queue --preemption --json" ;;
        daemon) opts="--json --persist --lines" ;;
        node) opts="--host --user --port --identity --agent-path --label --kind --node-lost-after --accept-new-host-key --json --force" ;;
        pipeline) opts="--param --node --follow --json" ;;
        cache) opts="--pipeline --step --json --all --older-than --max-size" ;;
        group) opts="--kind --json" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts --help --db" -- "$cur"))
        return
    fi
    case $cmd in
        validate|submit)
            # Job specs and scripts, and folders to descend into.
            local IFS=$'\n'
            COMPREPLY=($(compgen -d -S / -- "$cur") $(compgen -f -- "$cur" | grep -E '\.(yaml|yml|py|sh)$'))
            compopt -o nospace 2>/dev/null
            [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} != */ ]] && compopt +o nospace 2>/dev/null
            ;;
        help) [[ -z $sub ]] && COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
        policy) [[ -z $sub ]] && COMPREPLY=($(compgen -W "fcfs priority sjf backfill fair-share" -- "$cur")) ;;
        daemon) [[ -z $sub ]] && COMPREPLY=($(compgen -W "status start stop log" -- "$cur")) ;;
        node)
            if [[ -z $sub ]]; then
                COMPREPLY=($(compgen -W "add ls label trust rm" -- "$cur"))
            elif [[ $cur == -* && $sub == label ]]; then
                COMPREPLY=($(compgen -W "--add --remove" -- "$cur"))
            elif [[ $sub == trust || $sub == rm || $sub == label ]]; then
                COMPREPLY=($(compgen -W "$(trainyardctl "${db[@]}" node ls --json 2>/dev/null | _trainyardctl_json_field name)" -- "$cur"))
            fi
            ;;
        import)
            if [[ -z $sub ]]; then
                COMPREPLY=($(compgen -W "$(_trainyardctl_runs)" -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            ;;
        pipeline)
            if [[ -z $sub ]]; then
                COMPREPLY=($(compgen -W "submit ls show cancel resume" -- "$cur"))
            elif [[ $sub == submit ]]; then
                local IFS=$'\n'
                COMPREPLY=($(compgen -d -S / -- "$cur") $(compgen -f -- "$cur" | grep -E '\.(yaml|yml)$'))
                compopt -o nospace 2>/dev/null
                [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} != */ ]] && compopt +o nospace 2>/dev/null
            fi
            ;;
        cache) [[ -z $sub ]] && COMPREPLY=($(compgen -W "ls explain rm" -- "$cur")) ;;
        group)
            if [[ $prev == --kind ]]; then
                COMPREPLY=($(compgen -W "sweep gang pipeline attempts" -- "$cur"))
            elif [[ -z $sub ]]; then
                COMPREPLY=($(compgen -W "ls show" -- "$cur"))
            fi
            ;;
        ls) ;;
        *)
            # The commands taking RUN: ids and names of the stored runs
            # (archived ones too, for unarchive).
            if [[ -z $sub || $cmd == archive || $cmd == unarchive ]]; then
                COMPREPLY=($(compgen -W "$(_trainyardctl_runs)" -- "$cur"))
            fi
            ;;
    esac
}

_trainyardctl_runs()
{
    local json
    json=$(trainyardctl "${db[@]}" ls --json 2>/dev/null; trainyardctl "${db[@]}" ls --json --archived 2>/dev/null)
    printf '%s\n' "$json" | _trainyardctl_json_field id | sort -un
    printf '%s\n' "$json" | _trainyardctl_json_field name | sort -u
}

complete -F _trainyardctl trainyardctl
