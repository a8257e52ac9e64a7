
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'mllp' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'mllp'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'mllp' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('send', 'send', [CompletionResultType]::ParameterValue, 'Send HL7 files to an MLLP endpoint and account for every message')
            [CompletionResult]::new('listen', 'listen', [CompletionResultType]::ParameterValue, 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Find out why an endpoint will not talk: resolve, connect, TLS, and optionally one message')
            [CompletionResult]::new('soak', 'soak', [CompletionResultType]::ParameterValue, 'Hold a link under load, watch it fail and heal, and prove nothing was lost')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write one per subcommand into a directory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mllp;send' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'mllp;listen' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'mllp;probe' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'mllp;soak' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'mllp;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'mllp;man' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Write `mllp.1` and one page per subcommand into this directory instead of printing `mllp.1`')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'mllp;help' {
            [CompletionResult]::new('send', 'send', [CompletionResultType]::ParameterValue, 'Send HL7 files to an MLLP endpoint and account for every message')
            [CompletionResult]::new('listen', 'listen', [CompletionResultType]::ParameterValue, 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Find out why an endpoint will not talk: resolve, connect, TLS, and optionally one message')
            [CompletionResult]::new('soak', 'soak', [CompletionResultType]::ParameterValue, 'Hold a link under load, watch it fail and heal, and prove nothing was lost')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write one per subcommand into a directory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mllp;help;send' {
            break
        }
        'mllp;help;listen' {
            break
        }
        'mllp;help;probe' {
            break
        }
        'mllp;help;soak' {
            break
        }
        'mllp;help;completions' {
            break
        }
        'mllp;help;man' {
            break
        }
        'mllp;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
