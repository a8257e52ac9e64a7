
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
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'The endpoint: HOST or HOST:PORT (IPv6 in brackets: [fd00::7]:2575)')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'The port, when --host names none [default: 2575]')
            [CompletionResult]::new('--max-input', '--max-input', [CompletionResultType]::ParameterName, 'Most bytes of stdin spooled for checking (K, M, G suffixes)')
            [CompletionResult]::new('--ca', '--ca', [CompletionResultType]::ParameterName, 'Extra CA certificate(s) to trust, PEM. Implies --tls')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Client private key for mutual TLS, PEM. Needs --cert')
            [CompletionResult]::new('--server-name', '--server-name', [CompletionResultType]::ParameterName, 'Name to send as SNI and to verify the certificate against (default: the host)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Bound on TCP connect plus TLS handshake')
            [CompletionResult]::new('--ack-timeout', '--ack-timeout', [CompletionResultType]::ParameterName, 'How long to wait for an ACK, from the moment the frame is flushed')
            [CompletionResult]::new('--app-ack-timeout', '--app-ack-timeout', [CompletionResultType]::ParameterName, 'How long to wait for the application ACK after a CA (enhanced mode)')
            [CompletionResult]::new('--keepalive', '--keepalive', [CompletionResultType]::ParameterName, 'TCP keepalive interval (off by default)')
            [CompletionResult]::new('--dead-peer-timeout', '--dead-peer-timeout', [CompletionResultType]::ParameterName, 'Drop and reconnect a link that receives nothing for this long (off by default)')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'How long closing waits for the ACKs of messages already written')
            [CompletionResult]::new('--max-retries', '--max-retries', [CompletionResultType]::ParameterName, 'Stop after this many failed reconnect attempts in a row')
            [CompletionResult]::new('--give-up-after', '--give-up-after', [CompletionResultType]::ParameterName, 'Stop reconnecting after this long without a working connection')
            [CompletionResult]::new('--backoff-initial', '--backoff-initial', [CompletionResultType]::ParameterName, 'First reconnect delay')
            [CompletionResult]::new('--backoff-max', '--backoff-max', [CompletionResultType]::ParameterName, 'Largest reconnect delay')
            [CompletionResult]::new('--backoff-multiplier', '--backoff-multiplier', [CompletionResultType]::ParameterName, 'Factor between consecutive reconnect delays')
            [CompletionResult]::new('--backoff-jitter', '--backoff-jitter', [CompletionResultType]::ParameterName, 'Random spread of each delay, as a fraction (0.2 = +/-20 %)')
            [CompletionResult]::new('--correlate', '--correlate', [CompletionResultType]::ParameterName, 'How ACKs are matched to messages (see the resend policy below)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Messages written and not yet acknowledged, at most')
            [CompletionResult]::new('--window-bytes', '--window-bytes', [CompletionResultType]::ParameterName, 'Payload bytes written and not yet acknowledged, at most (K, M, G suffixes)')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Send at most this many messages per second (`200` or `200/s`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Bound on the whole run: by then it has stopped and reported. Messages not yet written end never-delivered (run-timeout), written ones without an answer unknown-fate')
            [CompletionResult]::new('--max-resends', '--max-resends', [CompletionResultType]::ParameterName, 'Most times one message is resent after reconnects')
            [CompletionResult]::new('--failed-out', '--failed-out', [CompletionResultType]::ParameterName, 'Write every message that did not end accepted to DIR, one file each')
            [CompletionResult]::new('--progress', '--progress', [CompletionResultType]::ParameterName, 'Progress bar on stderr')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'Walk directories given as inputs')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Walk directories given as inputs')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Send segment terminators as they are (no CRLF/LF -> CR normalisation)')
            [CompletionResult]::new('--batch', '--batch', [CompletionResultType]::ParameterName, 'Send each batch envelope (FHS/BHS ... BTS/FTS) as one frame instead of its messages')
            [CompletionResult]::new('--stream', '--stream', [CompletionResultType]::ParameterName, 'Read stdin as it comes, endlessly, without checking it first')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Read and check every input, list what would be sent, and connect to nothing')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Speak TLS (verification on, against the system roots plus --ca)')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Accept any server certificate. Prints a security warning on every connect')
            [CompletionResult]::new('--no-reconnect', '--no-reconnect', [CompletionResultType]::ParameterName, 'Do not reconnect after a transient failure')
            [CompletionResult]::new('--no-pipeline', '--no-pipeline', [CompletionResultType]::ParameterName, 'One message at a time: write, wait for its ACK, then the next')
            [CompletionResult]::new('--at-least-once', '--at-least-once', [CompletionResultType]::ParameterName, 'FIFO: also resend messages of unknown fate after a reconnect (risk: duplicates)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'NDJSON on stdout: one record per message, then a summary record')
            [CompletionResult]::new('--print-ack', '--print-ack', [CompletionResultType]::ParameterName, 'Show each ACK payload (in --json, a field `ack`)')
            [CompletionResult]::new('--events', '--events', [CompletionResultType]::ParameterName, 'Print connection state changes and reconnects on stderr as they happen')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'mllp;listen' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Address to bind. A wildcard (0.0.0.0, ::) needs --allow-wildcard')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port to bind; 0 picks a free one (the `listening` event says which)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How the stdout sink prints each message')
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Commit each message as one fsynced .hl7 file in DIR instead of printing it')
            [CompletionResult]::new('--sqlite', '--sqlite', [CompletionResultType]::ParameterName, 'Commit each message as a row of table `messages` in an SQLite database FILE (created on first use; WAL, full synchronous commits, one transaction per group of messages)')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'Commit each message by piping it to `sh -c CMD` (env MLLP_PEER, MLLP_CONTROL_ID, MLLP_MESSAGE_TYPE); exit 0 commits, --reject-exit-code rejects, anything else fails')
            [CompletionResult]::new('--reject-exit-code', '--reject-exit-code', [CompletionResultType]::ParameterName, 'The --exec exit status that rejects a message (AR/CR)')
            [CompletionResult]::new('--exec-timeout', '--exec-timeout', [CompletionResultType]::ParameterName, 'Kill an --exec command still running after this long and fail its message (AE/CE)')
            [CompletionResult]::new('--exec-concurrency', '--exec-concurrency', [CompletionResultType]::ParameterName, '--exec commands running at once')
            [CompletionResult]::new('--ack', '--ack', [CompletionResultType]::ParameterName, 'How to answer: `auto` follows MSH-15 and the commit; `none` never answers; a code forces it for testing (still never positive for an uncommitted or damaged message)')
            [CompletionResult]::new('--dedupe-window', '--dedupe-window', [CompletionResultType]::ParameterName, 'How many committed messages --dedupe remembers (not used with --sqlite: the table is the memory)')
            [CompletionResult]::new('--ack-delay', '--ack-delay', [CompletionResultType]::ParameterName, 'Test double: hold every ACK back this long after the commit')
            [CompletionResult]::new('--nack-rate', '--nack-rate', [CompletionResultType]::ParameterName, 'Test double: this share of messages (0..1) is not committed and answered AE/CE')
            [CompletionResult]::new('--reject-rate', '--reject-rate', [CompletionResultType]::ParameterName, 'Test double: this share of messages (0..1) is not committed and answered AR/CR')
            [CompletionResult]::new('--silent-rate', '--silent-rate', [CompletionResultType]::ParameterName, 'Test double: this share of messages (0..1) is committed and never answered')
            [CompletionResult]::new('--drop-after', '--drop-after', [CompletionResultType]::ParameterName, 'Test double: answer N messages on each connection, then close it')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed for the test-double rates (default: from the clock, printed in the stats)')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Serve TLS with this certificate chain (PEM); needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--client-ca', '--client-ca', [CompletionResultType]::ParameterName, 'Roots (PEM) that client certificates are verified against; needed by --client-auth want|must')
            [CompletionResult]::new('--client-auth', '--client-auth', [CompletionResultType]::ParameterName, 'Client certificates: not asked for, asked for and verified when given, or required')
            [CompletionResult]::new('--tls-handshake-timeout', '--tls-handshake-timeout', [CompletionResultType]::ParameterName, 'A client that has not finished its TLS handshake within this long is dropped')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics over HTTP on ADDR (e.g. 127.0.0.1:9898)')
            [CompletionResult]::new('--max-frame-size', '--max-frame-size', [CompletionResultType]::ParameterName, 'Largest payload accepted, in bytes (suffixes K, M, G, also KiB, MiB, GiB); larger frames end the connection')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'Connections open at once; extra peers are accepted and closed at once')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'Close a connection that sends nothing for this long (default: never)')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'On SIGINT/SIGTERM, how long commits under way may take to finish and be acknowledged')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('--allow-wildcard', '--allow-wildcard', [CompletionResultType]::ParameterName, 'Allow binding every interface (prints security warning MLLP_BIND_ALL_INTERFACES)')
            [CompletionResult]::new('--dedupe', '--dedupe', [CompletionResultType]::ParameterName, 'Answer a message whose MSH-10 + MSH-7 was already committed positively, without committing it again (remembered in --out-dir''s journal, or by a unique index with --sqlite)')
            [CompletionResult]::new('--batch-ack', '--batch-ack', [CompletionResultType]::ParameterName, 'Commit a batch frame (FHS/BHS) as one unit and answer it with a batch acknowledgement')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Turn every framing tolerance off (FS without CR, LF after FS, whitespace before VT)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'mllp;probe' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'The endpoint, instead of the positional HOST[:PORT]')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'The port, when the endpoint names none [default: 2575]')
            [CompletionResult]::new('--message', '--message', [CompletionResultType]::ParameterName, 'Send the first message of FILE instead (line ends normalised to CR). Implies --send')
            [CompletionResult]::new('--banner-wait', '--banner-wait', [CompletionResultType]::ParameterName, 'How long to listen for unsolicited bytes after connecting (0 skips it). A receiver should stay silent; bytes mean the peer is not MLLP [default: 500ms].')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Sets the connect, TLS and ACK timeouts at once (the specific flags win)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Bound on name resolution, and on the TCP connect over all addresses [default: 5s].')
            [CompletionResult]::new('--tls-timeout', '--tls-timeout', [CompletionResultType]::ParameterName, 'Bound on the TLS handshake [default: 5s].')
            [CompletionResult]::new('--ack-timeout', '--ack-timeout', [CompletionResultType]::ParameterName, 'Bound on the wait for the ACK, from the start of the write [default: 10s].')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'Probe this many times, one line each, then statistics per phase')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'Pause between probes with --count')
            [CompletionResult]::new('--ca', '--ca', [CompletionResultType]::ParameterName, 'Extra CA certificate(s) to trust, PEM. Implies --tls')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Client private key for mutual TLS, PEM. Needs --cert')
            [CompletionResult]::new('--server-name', '--server-name', [CompletionResultType]::ParameterName, 'Name to send as SNI and to verify the certificate against (default: the host)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('--send', '--send', [CompletionResultType]::ParameterName, 'Send one message and wait for its ACK (a synthetic ADT^A01 with processing ID D and a unique control ID, unless --message)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per probe on stdout (and a summary object after several)')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Speak TLS (verification on, against the system roots plus --ca)')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Accept any server certificate. Prints a security warning on every connect')
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
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'The peer to drive, HOST or HOST:PORT (IPv6 in brackets). Without it, an embedded listener on 127.0.0.1 takes the load. Never taken from the environment')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'The peer''s port, when --host names none [default: 2575]')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'Message templates: the first message of each file, used in turn. Each message sent gets a unique MSH-10 and a fresh MSH-7')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Connections, one client each')
            [CompletionResult]::new('--connections', '--connections', [CompletionResultType]::ParameterName, 'Connections, one client each')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Total messages per second, spread evenly over the connections (`2000` or `2000/s`). Unset: as fast as the window allows')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Stop generating after this long')
            [CompletionResult]::new('--messages', '--messages', [CompletionResultType]::ParameterName, 'Stop after this many messages in total')
            [CompletionResult]::new('--ramp-up', '--ramp-up', [CompletionResultType]::ParameterName, 'Climb linearly to --rate over this long (without --rate: start the connections one by one over this long)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Messages written and not yet acknowledged, per connection')
            [CompletionResult]::new('--chaos', '--chaos', [CompletionResultType]::ParameterName, 'Inject faults: comma-separated kind=probability[:duration] with kinds reset, nack, delay, stall, drop (e.g. reset=0.01,delay=0.1:50ms,drop=0.0005:3s)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed for the fault dice and the run''s control IDs')
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Embedded listener: commit each message as an fsynced file in DIR instead of memory')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Write the report (JSON) to FILE')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'The live view: auto (when stderr is a terminal), always, never. Under --log-format json it is never drawn: progress events come instead')
            [CompletionResult]::new('--report-interval', '--report-interval', [CompletionResultType]::ParameterName, 'How often a plain progress line (or progress event) is printed when the live view is off')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898)')
            [CompletionResult]::new('--max-p99', '--max-p99', [CompletionResultType]::ParameterName, 'Fail (exit 6) when the p99 latency is above this')
            [CompletionResult]::new('--max-error-rate', '--max-error-rate', [CompletionResultType]::ParameterName, 'Fail (exit 6) when more than this fraction of messages did not end accepted')
            [CompletionResult]::new('--min-throughput', '--min-throughput', [CompletionResultType]::ParameterName, 'Fail (exit 6) when fewer messages than this were accepted per second')
            [CompletionResult]::new('--merge', '--merge', [CompletionResultType]::ParameterName, 'Combine these reports into one on stdout, and run nothing')
            [CompletionResult]::new('--ca', '--ca', [CompletionResultType]::ParameterName, 'Extra CA certificate(s) to trust, PEM. Implies --tls')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Client private key for mutual TLS, PEM. Needs --cert')
            [CompletionResult]::new('--server-name', '--server-name', [CompletionResultType]::ParameterName, 'Name to send as SNI and to verify the certificate against (default: the host)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Bound on TCP connect plus TLS handshake')
            [CompletionResult]::new('--ack-timeout', '--ack-timeout', [CompletionResultType]::ParameterName, 'How long to wait for an ACK, from the moment the frame is flushed')
            [CompletionResult]::new('--app-ack-timeout', '--app-ack-timeout', [CompletionResultType]::ParameterName, 'How long to wait for the application ACK after a CA (enhanced mode)')
            [CompletionResult]::new('--keepalive', '--keepalive', [CompletionResultType]::ParameterName, 'TCP keepalive interval (off by default)')
            [CompletionResult]::new('--dead-peer-timeout', '--dead-peer-timeout', [CompletionResultType]::ParameterName, 'Drop and reconnect a link that receives nothing for this long (off by default)')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'How long closing waits for the ACKs of messages already written')
            [CompletionResult]::new('--max-retries', '--max-retries', [CompletionResultType]::ParameterName, 'Stop after this many failed reconnect attempts in a row')
            [CompletionResult]::new('--give-up-after', '--give-up-after', [CompletionResultType]::ParameterName, 'Stop reconnecting after this long without a working connection')
            [CompletionResult]::new('--backoff-initial', '--backoff-initial', [CompletionResultType]::ParameterName, 'First reconnect delay')
            [CompletionResult]::new('--backoff-max', '--backoff-max', [CompletionResultType]::ParameterName, 'Largest reconnect delay')
            [CompletionResult]::new('--backoff-multiplier', '--backoff-multiplier', [CompletionResultType]::ParameterName, 'Factor between consecutive reconnect delays')
            [CompletionResult]::new('--backoff-jitter', '--backoff-jitter', [CompletionResultType]::ParameterName, 'Random spread of each delay, as a fraction (0.2 = +/-20 %)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Format of diagnostics on stderr')
            [CompletionResult]::new('--allow-synthetic', '--allow-synthetic', [CompletionResultType]::ParameterName, 'Send the built-in synthetic ADT^A01 (processing ID T) to a real --host')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as JSON on stdout (and no live view)')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Speak TLS (verification on, against the system roots plus --ca)')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Accept any server certificate. Prints a security warning on every connect')
            [CompletionResult]::new('--no-reconnect', '--no-reconnect', [CompletionResultType]::ParameterName, 'Do not reconnect after a transient failure')
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
