
use builtin;
use str;

set edit:completion:arg-completer[mllp] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'mllp'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'mllp'= {
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand send 'Send HL7 files to an MLLP endpoint and account for every message'
            cand listen 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it'
            cand probe 'Find out why an endpoint will not talk: resolve, connect, TLS, and optionally one message'
            cand soak 'Hold a link under load, watch it fail and heal, and prove nothing was lost'
            cand completions 'Print a shell completion script'
            cand man 'Print the man page, or write one per subcommand into a directory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mllp;send'= {
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'mllp;listen'= {
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'mllp;probe'= {
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'mllp;soak'= {
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'mllp;completions'= {
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'mllp;man'= {
            cand --dir 'Write `mllp.1` and one page per subcommand into this directory instead of printing `mllp.1`'
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'mllp;help'= {
            cand send 'Send HL7 files to an MLLP endpoint and account for every message'
            cand listen 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it'
            cand probe 'Find out why an endpoint will not talk: resolve, connect, TLS, and optionally one message'
            cand soak 'Hold a link under load, watch it fail and heal, and prove nothing was lost'
            cand completions 'Print a shell completion script'
            cand man 'Print the man page, or write one per subcommand into a directory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mllp;help;send'= {
        }
        &'mllp;help;listen'= {
        }
        &'mllp;help;probe'= {
        }
        &'mllp;help;soak'= {
        }
        &'mllp;help;completions'= {
        }
        &'mllp;help;man'= {
        }
        &'mllp;help;help'= {
        }
    ]
    $completions[$command]
}
