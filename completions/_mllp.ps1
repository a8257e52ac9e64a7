
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
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('send', 'send', [CompletionResultType]::ParameterValue, 'Send HL7 files to an MLLP endpoint and account for every message')
            [CompletionResult]::new('listen', 'listen', [CompletionResultType]::ParameterValue, 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it')
            [CompletionResult]::new('relay', 'relay', [CompletionResultType]::ParameterValue, 'Stand between two systems: forward, show, bridge TLS, queue while the upstream is down')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Find out why an endpoint will not talk: resolve, connect, TLS, and one message')
            [CompletionResult]::new('soak', 'soak', [CompletionResultType]::ParameterValue, 'Hold a link under load, watch it fail and heal, and prove nothing was lost')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show what HL7 messages hold: an outline of their fields, or the values at paths')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check whether HL7 messages are well formed, by the standard''s rules and a site''s')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two sets of messages, paired by key, field by field')
            [CompletionResult]::new('deid', 'deid', [CompletionResultType]::ParameterValue, 'Write the same messages with their patients replaced, consistently under a key')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write one per subcommand into a directory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mllp;send' {
            [CompletionResult]::new('--max-frame-size', '--max-frame-size', [CompletionResultType]::ParameterName, 'Largest message sent (K, M, G)')
            [CompletionResult]::new('--max-input', '--max-input', [CompletionResultType]::ParameterName, 'Most bytes of stdin spooled for checking (K, M, G)')
            [CompletionResult]::new('--from-db', '--from-db', [CompletionResultType]::ParameterName, 'Replay a listen --sqlite or relay store, in arrival order')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'With --from-db: rows that arrived at TIME (RFC 3339, UTC) or later')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'With --from-db: rows that arrived before TIME (RFC 3339, UTC)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'With --from-db: messages of this MSH-9, by leading components')
            [CompletionResult]::new('--control-id', '--control-id', [CompletionResultType]::ParameterName, 'With --from-db: the message with this MSH-10')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'With a relay store: rows whose upstream fate is STATUS (repeatable)')
            [CompletionResult]::new('--pace', '--pace', [CompletionResultType]::ParameterName, 'With --from-db: `original` keeps the recorded gaps')
            [CompletionResult]::new('--speed', '--speed', [CompletionResultType]::ParameterName, 'With --pace original: the gaps this many times shorter')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Send only the messages for which FILTER holds (repeat: all must hold)')
            [CompletionResult]::new('--max-gap', '--max-gap', [CompletionResultType]::ParameterName, 'With --pace original: wait at most this long between two messages')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Where to send: HOST or HOST:PORT; repeatable')
            [CompletionResult]::new('--failover-after', '--failover-after', [CompletionResultType]::ParameterName, 'Next --host after N failed connects in a row')
            [CompletionResult]::new('--failback-after', '--failback-after', [CompletionResultType]::ParameterName, 'Back to the first --host after this long away')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port, when --host has none [default: 2575]')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Bound on TCP connect plus TLS handshake')
            [CompletionResult]::new('--ack-timeout', '--ack-timeout', [CompletionResultType]::ParameterName, 'Wait for an ACK, from the frame''s flush')
            [CompletionResult]::new('--app-ack-timeout', '--app-ack-timeout', [CompletionResultType]::ParameterName, 'Wait for the application ACK after a CA')
            [CompletionResult]::new('--keepalive', '--keepalive', [CompletionResultType]::ParameterName, 'TCP keepalive interval (default: off)')
            [CompletionResult]::new('--dead-peer-timeout', '--dead-peer-timeout', [CompletionResultType]::ParameterName, 'Reconnect after hearing nothing this long (default: off)')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'On closing, wait for ACKs of messages written')
            [CompletionResult]::new('--max-retries', '--max-retries', [CompletionResultType]::ParameterName, 'Stop after N failed reconnect attempts in a row')
            [CompletionResult]::new('--give-up-after', '--give-up-after', [CompletionResultType]::ParameterName, 'Stop reconnecting after this long')
            [CompletionResult]::new('--backoff-initial', '--backoff-initial', [CompletionResultType]::ParameterName, 'First reconnect delay')
            [CompletionResult]::new('--backoff-max', '--backoff-max', [CompletionResultType]::ParameterName, 'Largest reconnect delay')
            [CompletionResult]::new('--backoff-multiplier', '--backoff-multiplier', [CompletionResultType]::ParameterName, 'Factor between consecutive reconnect delays')
            [CompletionResult]::new('--backoff-jitter', '--backoff-jitter', [CompletionResultType]::ParameterName, 'Random spread of each delay (0.2 = +/-20 %)')
            [CompletionResult]::new('--ca', '--ca', [CompletionResultType]::ParameterName, 'Extra CA certificate(s) to trust, PEM; implies --tls')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'Client certificate chain (PEM) for mutual TLS; needs --key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Client private key (PEM) for mutual TLS; needs --cert')
            [CompletionResult]::new('--server-name', '--server-name', [CompletionResultType]::ParameterName, 'Name for SNI and the certificate check (default: the host)')
            [CompletionResult]::new('--correlate', '--correlate', [CompletionResultType]::ParameterName, 'How ACKs are matched to messages (see --help)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Messages written and not yet acknowledged, at most')
            [CompletionResult]::new('--window-bytes', '--window-bytes', [CompletionResultType]::ParameterName, 'Payload bytes written and not yet acknowledged, at most')
            [CompletionResult]::new('--connections', '--connections', [CompletionResultType]::ParameterName, 'Connections side by side; above 1 needs --order-key')
            [CompletionResult]::new('--order-key', '--order-key', [CompletionResultType]::ParameterName, 'What keeps order over --connections: a path (PID-3), or none')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Send at most this many messages per second (`200` or `200/s`)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Bound on the whole run, like curl''s --max-time')
            [CompletionResult]::new('--max-resends', '--max-resends', [CompletionResultType]::ParameterName, 'Most times one message is written again')
            [CompletionResult]::new('--retry-on', '--retry-on', [CompletionResultType]::ParameterName, 'Make a negative answer transient (repeatable), e.g. AE:206')
            [CompletionResult]::new('--max-poison-closes', '--max-poison-closes', [CompletionResultType]::ParameterName, 'Closes on one message that make it a poison message')
            [CompletionResult]::new('--failed-out', '--failed-out', [CompletionResultType]::ParameterName, 'Write each message not accepted to DIR, one file each')
            [CompletionResult]::new('--progress', '--progress', [CompletionResultType]::ParameterName, 'Progress bar on stderr: auto, always, never')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'Walk directories given as inputs')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Walk directories given as inputs')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Send segment terminators as they are (no CRLF/LF -> CR)')
            [CompletionResult]::new('--batch', '--batch', [CompletionResultType]::ParameterName, 'Send each batch envelope (FHS/BHS ... BTS/FTS) as one frame')
            [CompletionResult]::new('--stream', '--stream', [CompletionResultType]::ParameterName, 'Read stdin as it comes, endlessly, without checking it first')
            [CompletionResult]::new('--fresh-control-ids', '--fresh-control-ids', [CompletionResultType]::ParameterName, 'Give every message a unique MSH-10 of its own')
            [CompletionResult]::new('--check-hl7', '--check-hl7', [CompletionResultType]::ParameterName, 'Send nothing unless every message is well formed (as mllp check)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Check and list what would be sent; connect to nothing')
            [CompletionResult]::new('--no-reconnect', '--no-reconnect', [CompletionResultType]::ParameterName, 'Do not reconnect after a transient failure')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Speak TLS, verifying the server against the system roots and --ca')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Accept any server certificate (warns on every connect)')
            [CompletionResult]::new('--no-pipeline', '--no-pipeline', [CompletionResultType]::ParameterName, 'One message at a time: write, wait for its ACK, then the next')
            [CompletionResult]::new('--mllp2', '--mllp2', [CompletionResultType]::ParameterName, 'Speak MLLP Release 2 (commit and NAK blocks)')
            [CompletionResult]::new('--at-least-once', '--at-least-once', [CompletionResultType]::ParameterName, 'FIFO: also rewrite unanswered messages after a reconnect')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'NDJSON on stdout: one record per message, then a summary record')
            [CompletionResult]::new('--print-ack', '--print-ack', [CompletionResultType]::ParameterName, 'Show each ACK payload (in --json, a field `ack`)')
            [CompletionResult]::new('--events', '--events', [CompletionResultType]::ParameterName, 'Print connection state changes and reconnects as they happen')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;listen' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Address to bind (a wildcard needs --allow-wildcard)')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port to bind; 0 picks a free one')
            [CompletionResult]::new('--proxy-from', '--proxy-from', [CompletionResultType]::ParameterName, 'Addresses trusted to send PROXY headers [default: loopback]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'The stdout sink''s format: hl7, json, raw [default: hl7]')
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Commit each message as one fsynced .hl7 file in DIR')
            [CompletionResult]::new('--sqlite', '--sqlite', [CompletionResultType]::ParameterName, 'Commit each message as a row of table `messages` in SQLite FILE')
            [CompletionResult]::new('--postgres', '--postgres', [CompletionResultType]::ParameterName, 'Commit each message as a row of table `messages` in PostgreSQL')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'Commit each message by piping it to `sh -c CMD`')
            [CompletionResult]::new('--reject-exit-code', '--reject-exit-code', [CompletionResultType]::ParameterName, 'The --exec exit status that rejects a message (AR/CR)')
            [CompletionResult]::new('--exec-timeout', '--exec-timeout', [CompletionResultType]::ParameterName, 'Kill an --exec command and its group after this long')
            [CompletionResult]::new('--exec-concurrency', '--exec-concurrency', [CompletionResultType]::ParameterName, '--exec commands running at once')
            [CompletionResult]::new('--ack', '--ack', [CompletionResultType]::ParameterName, 'How to answer: auto, none, or a forced code (AA, AE, ...)')
            [CompletionResult]::new('--dedupe-window', '--dedupe-window', [CompletionResultType]::ParameterName, 'Messages --dedupe remembers (not with a database sink)')
            [CompletionResult]::new('--ack-delay', '--ack-delay', [CompletionResultType]::ParameterName, 'Hold every ACK back this long after the commit')
            [CompletionResult]::new('--nack-rate', '--nack-rate', [CompletionResultType]::ParameterName, 'Share (0..1) not committed, answered AE/CE')
            [CompletionResult]::new('--reject-rate', '--reject-rate', [CompletionResultType]::ParameterName, 'Share (0..1) not committed, answered AR/CR')
            [CompletionResult]::new('--silent-rate', '--silent-rate', [CompletionResultType]::ParameterName, 'Share (0..1) committed, never answered')
            [CompletionResult]::new('--drop-after', '--drop-after', [CompletionResultType]::ParameterName, 'Answer N messages on each connection, then close it')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed for the rates (default: from the clock, shown in the stats)')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Serve TLS with this certificate chain (PEM)')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--client-ca', '--client-ca', [CompletionResultType]::ParameterName, 'Roots (PEM) client certificates are verified against')
            [CompletionResult]::new('--client-auth', '--client-auth', [CompletionResultType]::ParameterName, 'Client certificates: none, want, must')
            [CompletionResult]::new('--tls-handshake-timeout', '--tls-handshake-timeout', [CompletionResultType]::ParameterName, 'Bound on a client''s TLS handshake')
            [CompletionResult]::new('--max-frame-size', '--max-frame-size', [CompletionResultType]::ParameterName, 'Largest payload accepted (K, M, G suffixes)')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'Connections open at once')
            [CompletionResult]::new('--max-connections-per-peer', '--max-connections-per-peer', [CompletionResultType]::ParameterName, 'Connections per address [default: --max-connections / 4]')
            [CompletionResult]::new('--frame-timeout', '--frame-timeout', [CompletionResultType]::ParameterName, 'Bound on receiving one frame; 0 turns it off')
            [CompletionResult]::new('--max-buffered', '--max-buffered', [CompletionResultType]::ParameterName, 'Memory held for all peers')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'Close a link idle this long (default: never)')
            [CompletionResult]::new('--evict-idle-after', '--evict-idle-after', [CompletionResultType]::ParameterName, 'At the cap, evict one idle this long; 0: never')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'On a stop, how long commits under way may take')
            [CompletionResult]::new('--log-rate', '--log-rate', [CompletionResultType]::ParameterName, 'Message lines a second per connection; 0: no limit')
            [CompletionResult]::new('--log-rate-total', '--log-rate-total', [CompletionResultType]::ParameterName, 'Message lines a second, all together; 0: no limit')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics over HTTP on ADDR (e.g. 127.0.0.1:9898)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('--allow-wildcard', '--allow-wildcard', [CompletionResultType]::ParameterName, 'Allow a wildcard --host or --metrics (warns MLLP_BIND_ALL_INTERFACES)')
            [CompletionResult]::new('--proxy-protocol', '--proxy-protocol', [CompletionResultType]::ParameterName, 'Take peer addresses from a load balancer''s PROXY header (v1 or v2)')
            [CompletionResult]::new('--dedupe', '--dedupe', [CompletionResultType]::ParameterName, 'Answer a repeated message positively without committing it again')
            [CompletionResult]::new('--batch-ack', '--batch-ack', [CompletionResultType]::ParameterName, 'Commit a batch (FHS/BHS) as one unit and answer it with one ACK')
            [CompletionResult]::new('--mllp2', '--mllp2', [CompletionResultType]::ParameterName, 'Speak MLLP Release 2 (commit and NAK blocks)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Turn every framing tolerance off')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'JSON: --log-format json, and --format json when stdout is the sink')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;relay' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Where to listen: PORT or HOST:PORT (host default 127.0.0.1)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Where to forward: HOST[:PORT], repeatable [default port: 2575]')
            [CompletionResult]::new('--failover-after', '--failover-after', [CompletionResultType]::ParameterName, 'Next --to after N failed connects in a row [default: 3]')
            [CompletionResult]::new('--failback-after', '--failback-after', [CompletionResultType]::ParameterName, 'Back to the first --to after this long away')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Bound on TCP connect plus TLS handshake')
            [CompletionResult]::new('--ack-timeout', '--ack-timeout', [CompletionResultType]::ParameterName, 'Wait for an ACK, from the frame''s flush')
            [CompletionResult]::new('--app-ack-timeout', '--app-ack-timeout', [CompletionResultType]::ParameterName, 'Wait for the application ACK after a CA')
            [CompletionResult]::new('--keepalive', '--keepalive', [CompletionResultType]::ParameterName, 'TCP keepalive interval (default: off)')
            [CompletionResult]::new('--dead-peer-timeout', '--dead-peer-timeout', [CompletionResultType]::ParameterName, 'Reconnect after hearing nothing this long (default: off)')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'On closing, wait for ACKs of messages written')
            [CompletionResult]::new('--backoff-initial', '--backoff-initial', [CompletionResultType]::ParameterName, 'First reconnect delay')
            [CompletionResult]::new('--backoff-multiplier', '--backoff-multiplier', [CompletionResultType]::ParameterName, 'Factor between consecutive reconnect delays')
            [CompletionResult]::new('--backoff-jitter', '--backoff-jitter', [CompletionResultType]::ParameterName, 'Random spread of each delay (0.2 = +/-20 %)')
            [CompletionResult]::new('--ca', '--ca', [CompletionResultType]::ParameterName, 'Extra CA certificate(s) to trust, PEM; implies --tls')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'Client certificate chain (PEM) for mutual TLS; needs --key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Client private key (PEM) for mutual TLS; needs --cert')
            [CompletionResult]::new('--server-name', '--server-name', [CompletionResultType]::ParameterName, 'Name for SNI and the certificate check (default: the host)')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Serve TLS with this certificate chain (PEM)')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--client-ca', '--client-ca', [CompletionResultType]::ParameterName, 'Roots (PEM) client certificates are verified against')
            [CompletionResult]::new('--client-auth', '--client-auth', [CompletionResultType]::ParameterName, 'Client certificates: none, want, must')
            [CompletionResult]::new('--tls-handshake-timeout', '--tls-handshake-timeout', [CompletionResultType]::ParameterName, 'Bound on a client''s TLS handshake')
            [CompletionResult]::new('--mirror', '--mirror', [CompletionResultType]::ParameterName, 'Copy every message to a shadow engine [default port: 2575]')
            [CompletionResult]::new('--mirror-queue', '--mirror-queue', [CompletionResultType]::ParameterName, 'Most copies held for the shadow')
            [CompletionResult]::new('--mirror-compare', '--mirror-compare', [CompletionResultType]::ParameterName, 'What of the two answers is compared')
            [CompletionResult]::new('--ignore', '--ignore', [CompletionResultType]::ParameterName, 'A segment or field --mirror-compare ack leaves out (repeatable)')
            [CompletionResult]::new('--mirror-ca', '--mirror-ca', [CompletionResultType]::ParameterName, 'Extra CA certificate(s) for the shadow, PEM; implies --mirror-tls')
            [CompletionResult]::new('--mirror-cert', '--mirror-cert', [CompletionResultType]::ParameterName, 'Client certificate chain (PEM) for the shadow; needs --mirror-key')
            [CompletionResult]::new('--mirror-key', '--mirror-key', [CompletionResultType]::ParameterName, 'Client private key (PEM) for the shadow; needs --mirror-cert')
            [CompletionResult]::new('--mirror-server-name', '--mirror-server-name', [CompletionResultType]::ParameterName, 'Name for SNI and the shadow''s certificate (default: its host)')
            [CompletionResult]::new('--max-frame-size', '--max-frame-size', [CompletionResultType]::ParameterName, 'Largest payload accepted (K, M, G suffixes)')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'Connections open at once')
            [CompletionResult]::new('--max-connections-per-peer', '--max-connections-per-peer', [CompletionResultType]::ParameterName, 'Connections per address [default: --max-connections / 4]')
            [CompletionResult]::new('--frame-timeout', '--frame-timeout', [CompletionResultType]::ParameterName, 'Bound on receiving one frame; 0 turns it off')
            [CompletionResult]::new('--max-buffered', '--max-buffered', [CompletionResultType]::ParameterName, 'Memory held for all peers')
            [CompletionResult]::new('--idle-timeout', '--idle-timeout', [CompletionResultType]::ParameterName, 'Close a link idle this long (default: never)')
            [CompletionResult]::new('--evict-idle-after', '--evict-idle-after', [CompletionResultType]::ParameterName, 'At the cap, evict one idle this long; 0: never')
            [CompletionResult]::new('--log-rate', '--log-rate', [CompletionResultType]::ParameterName, 'Message lines a second per connection; 0: no limit')
            [CompletionResult]::new('--log-rate-total', '--log-rate-total', [CompletionResultType]::ParameterName, 'Message lines a second, all together; 0: no limit')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Messages written upstream and not yet acknowledged, at most')
            [CompletionResult]::new('--queue', '--queue', [CompletionResultType]::ParameterName, 'Store and forward through table `queue` of SQLite FILE')
            [CompletionResult]::new('--max-queue', '--max-queue', [CompletionResultType]::ParameterName, 'With --queue: most pending rows (beyond: AE, nothing kept)')
            [CompletionResult]::new('--record', '--record', [CompletionResultType]::ParameterName, 'Keep each message, its upstream answer and timings in SQLite FILE')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics over HTTP on ADDR (as listen does)')
            [CompletionResult]::new('--backoff-max', '--backoff-max', [CompletionResultType]::ParameterName, 'Largest reconnect delay')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('--allow-wildcard', '--allow-wildcard', [CompletionResultType]::ParameterName, 'Allow a wildcard --listen (warns MLLP_BIND_ALL_INTERFACES)')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Speak TLS, verifying the server against the system roots and --ca')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Accept any server certificate (warns on every connect)')
            [CompletionResult]::new('--mirror-tls', '--mirror-tls', [CompletionResultType]::ParameterName, 'Speak TLS to the shadow (as --tls to the upstream)')
            [CompletionResult]::new('--mirror-insecure', '--mirror-insecure', [CompletionResultType]::ParameterName, 'Accept any certificate from the shadow (warns on every connect)')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Turn every framing tolerance off')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;probe' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Endpoint instead of the positional; repeatable')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port if the endpoint has none [default: 2575]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Connect, TLS and ACK timeouts at once (specific flags win)')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Bound on resolving and connecting [default: 5s].')
            [CompletionResult]::new('--tls-timeout', '--tls-timeout', [CompletionResultType]::ParameterName, 'Bound on the TLS handshake [default: 5s].')
            [CompletionResult]::new('--ack-timeout', '--ack-timeout', [CompletionResultType]::ParameterName, 'Bound on the wait for the ACK, from the write [default: 10s].')
            [CompletionResult]::new('--ca', '--ca', [CompletionResultType]::ParameterName, 'Extra CA certificate(s) to trust, PEM; implies --tls')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'Client certificate chain (PEM) for mutual TLS; needs --key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Client private key (PEM) for mutual TLS; needs --cert')
            [CompletionResult]::new('--server-name', '--server-name', [CompletionResultType]::ParameterName, 'Name for SNI and the certificate check (default: the host)')
            [CompletionResult]::new('--message', '--message', [CompletionResultType]::ParameterName, 'Send the first message of FILE instead; implies --send')
            [CompletionResult]::new('--banner-wait', '--banner-wait', [CompletionResultType]::ParameterName, 'Listen this long for unsolicited bytes (0 skips) [default: 500ms].')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'Probe N times, one line each, then statistics')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'Pause between probes with --count')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Speak TLS, verifying the server against the system roots and --ca')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Accept any server certificate (warns on every connect)')
            [CompletionResult]::new('--send', '--send', [CompletionResultType]::ParameterName, 'Send one message and wait for its ACK (proves MLLP is spoken)')
            [CompletionResult]::new('--mllp2', '--mllp2', [CompletionResultType]::ParameterName, 'Expect MLLP Release 2 (a commit or NAK block); implies --send')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per probe on stdout (then a summary after several)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;soak' {
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'Message templates: the first message of each FILE, in turn')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Peer to drive, HOST[:PORT] (default: embedded listener)')
            [CompletionResult]::new('--failover-after', '--failover-after', [CompletionResultType]::ParameterName, 'Next --host after N failed connects in a row')
            [CompletionResult]::new('--failback-after', '--failback-after', [CompletionResultType]::ParameterName, 'Back to the first --host after this long away (default: never)')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port, when --host has none [default: 2575]')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Bound on TCP connect plus TLS handshake')
            [CompletionResult]::new('--ack-timeout', '--ack-timeout', [CompletionResultType]::ParameterName, 'Wait for an ACK, from the frame''s flush')
            [CompletionResult]::new('--app-ack-timeout', '--app-ack-timeout', [CompletionResultType]::ParameterName, 'Wait for the application ACK after a CA')
            [CompletionResult]::new('--keepalive', '--keepalive', [CompletionResultType]::ParameterName, 'TCP keepalive interval (default: off)')
            [CompletionResult]::new('--dead-peer-timeout', '--dead-peer-timeout', [CompletionResultType]::ParameterName, 'Reconnect after hearing nothing this long (default: off)')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'On closing, wait for ACKs of messages written')
            [CompletionResult]::new('--max-retries', '--max-retries', [CompletionResultType]::ParameterName, 'Stop after N failed reconnect attempts in a row')
            [CompletionResult]::new('--give-up-after', '--give-up-after', [CompletionResultType]::ParameterName, 'Stop reconnecting after this long')
            [CompletionResult]::new('--backoff-initial', '--backoff-initial', [CompletionResultType]::ParameterName, 'First reconnect delay')
            [CompletionResult]::new('--backoff-max', '--backoff-max', [CompletionResultType]::ParameterName, 'Largest reconnect delay')
            [CompletionResult]::new('--backoff-multiplier', '--backoff-multiplier', [CompletionResultType]::ParameterName, 'Factor between consecutive reconnect delays')
            [CompletionResult]::new('--backoff-jitter', '--backoff-jitter', [CompletionResultType]::ParameterName, 'Random spread of each delay (0.2 = +/-20 %)')
            [CompletionResult]::new('--ca', '--ca', [CompletionResultType]::ParameterName, 'Extra CA certificate(s) to trust, PEM; implies --tls')
            [CompletionResult]::new('--cert', '--cert', [CompletionResultType]::ParameterName, 'Client certificate chain (PEM) for mutual TLS; needs --key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Client private key (PEM) for mutual TLS; needs --cert')
            [CompletionResult]::new('--server-name', '--server-name', [CompletionResultType]::ParameterName, 'Name for SNI and the certificate check (default: the host)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Connections, one client each')
            [CompletionResult]::new('--connections', '--connections', [CompletionResultType]::ParameterName, 'Connections, one client each')
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Total messages per second over all connections (`2000` or `2000/s`)')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Stop generating after this long')
            [CompletionResult]::new('--messages', '--messages', [CompletionResultType]::ParameterName, 'Stop after this many messages in total')
            [CompletionResult]::new('--ramp-up', '--ramp-up', [CompletionResultType]::ParameterName, 'Climb linearly to --rate over this long')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Messages in flight per connection, at most')
            [CompletionResult]::new('--chaos', '--chaos', [CompletionResultType]::ParameterName, 'Inject faults: kind=probability[:duration],... (see --help)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed for the fault dice and the run''s control IDs')
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Embedded listener: commit each message as an fsynced file in DIR')
            [CompletionResult]::new('--max-p99', '--max-p99', [CompletionResultType]::ParameterName, 'Fail (exit 6) when the p99 latency is above this')
            [CompletionResult]::new('--max-error-rate', '--max-error-rate', [CompletionResultType]::ParameterName, 'Fail (exit 6) when more than this share did not end accepted')
            [CompletionResult]::new('--min-throughput', '--min-throughput', [CompletionResultType]::ParameterName, 'Fail (exit 6) when fewer than N were accepted per second')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Write the report (JSON) to FILE')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'The live view on stderr: auto, always, never')
            [CompletionResult]::new('--report-interval', '--report-interval', [CompletionResultType]::ParameterName, 'Progress line interval without the live view')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898)')
            [CompletionResult]::new('--merge', '--merge', [CompletionResultType]::ParameterName, 'Combine these reports into one on stdout, and run nothing')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('--allow-synthetic', '--allow-synthetic', [CompletionResultType]::ParameterName, 'Send the built-in synthetic ADT^A01 (processing ID T) to a real --host')
            [CompletionResult]::new('--no-reconnect', '--no-reconnect', [CompletionResultType]::ParameterName, 'Do not reconnect after a transient failure')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Speak TLS, verifying the server against the system roots and --ca')
            [CompletionResult]::new('--insecure', '--insecure', [CompletionResultType]::ParameterName, 'Accept any server certificate (warns on every connect)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the report as JSON on stdout (and no live view)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;show' {
            [CompletionResult]::new('--from-db', '--from-db', [CompletionResultType]::ParameterName, 'Read the messages of a listen --sqlite or relay store')
            [CompletionResult]::new('--postgres', '--postgres', [CompletionResultType]::ParameterName, 'Read the messages of a listen --postgres store')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only the messages for which FILTER holds (repeat: all must hold)')
            [CompletionResult]::new('--charset', '--charset', [CompletionResultType]::ParameterName, 'Read text in this character set, whatever MSH-18 says')
            [CompletionResult]::new('--max-frame-size', '--max-frame-size', [CompletionResultType]::ParameterName, 'Largest message read (K, M, G)')
            [CompletionResult]::new('--get', '--get', [CompletionResultType]::ParameterName, 'Print the value at PATH, one line per message (repeat for more columns)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'Walk directories given as inputs')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Walk directories given as inputs')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per message')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Values as written: escape sequences left as they are')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;check' {
            [CompletionResult]::new('--from-db', '--from-db', [CompletionResultType]::ParameterName, 'Read the messages of a listen --sqlite or relay store')
            [CompletionResult]::new('--postgres', '--postgres', [CompletionResultType]::ParameterName, 'Read the messages of a listen --postgres store')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only the messages for which FILTER holds (repeat: all must hold)')
            [CompletionResult]::new('--charset', '--charset', [CompletionResultType]::ParameterName, 'Read text in this character set, whatever MSH-18 says')
            [CompletionResult]::new('--max-frame-size', '--max-frame-size', [CompletionResultType]::ParameterName, 'Largest message read (K, M, G)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'A site''s own rules on top of the standard''s (TOML or JSON)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'Walk directories given as inputs')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Walk directories given as inputs')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per finding, then the summary')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;diff' {
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'What pairs a message of A with one of B (repeat for several) [default: MSH-10]')
            [CompletionResult]::new('--ignore', '--ignore', [CompletionResultType]::ParameterName, 'Leave a path or a whole segment out of the comparison (repeat)')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only the messages for which FILTER holds, on both sides (repeat: all must hold)')
            [CompletionResult]::new('--charset', '--charset', [CompletionResultType]::ParameterName, 'Read text in this character set, whatever MSH-18 says')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'NDJSON on stdout: one record per finding, then a summary record')
            [CompletionResult]::new('--no-values', '--no-values', [CompletionResultType]::ParameterName, 'Say where pairs differ, without the values (for logs)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;deid' {
            [CompletionResult]::new('--from-db', '--from-db', [CompletionResultType]::ParameterName, 'Read the messages of a listen --sqlite or relay store, in arrival order')
            [CompletionResult]::new('--where', '--where', [CompletionResultType]::ParameterName, 'Only the messages for which FILTER holds (repeat: all must hold)')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'The key every replacement is derived from (64 hexadecimal digits; see --new-key)')
            [CompletionResult]::new('--new-key', '--new-key', [CompletionResultType]::ParameterName, 'Write a new random key to FILE (readable by you alone) and stop')
            [CompletionResult]::new('--policy', '--policy', [CompletionResultType]::ParameterName, 'Add to or change the standard policy: TOML, or JSON when FILE ends in .json')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Where the messages go: a directory (absent or empty; one file per input, named as it) or `-` for stdout')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'Walk directories given as inputs (their layout is kept under --out)')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Walk directories given as inputs (their layout is kept under --out)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;man' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Write mllp.1 and one page per subcommand into DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output: auto, always, never')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Diagnostics on stderr as human or json lines')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr (repeat for more)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Only errors and the final summary on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (-h: one line per flag; --help: more detail)')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version')
            break
        }
        'mllp;help' {
            [CompletionResult]::new('send', 'send', [CompletionResultType]::ParameterValue, 'Send HL7 files to an MLLP endpoint and account for every message')
            [CompletionResult]::new('listen', 'listen', [CompletionResultType]::ParameterValue, 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it')
            [CompletionResult]::new('relay', 'relay', [CompletionResultType]::ParameterValue, 'Stand between two systems: forward, show, bridge TLS, queue while the upstream is down')
            [CompletionResult]::new('probe', 'probe', [CompletionResultType]::ParameterValue, 'Find out why an endpoint will not talk: resolve, connect, TLS, and one message')
            [CompletionResult]::new('soak', 'soak', [CompletionResultType]::ParameterValue, 'Hold a link under load, watch it fail and heal, and prove nothing was lost')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show what HL7 messages hold: an outline of their fields, or the values at paths')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check whether HL7 messages are well formed, by the standard''s rules and a site''s')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two sets of messages, paired by key, field by field')
            [CompletionResult]::new('deid', 'deid', [CompletionResultType]::ParameterValue, 'Write the same messages with their patients replaced, consistently under a key')
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
        'mllp;help;relay' {
            break
        }
        'mllp;help;probe' {
            break
        }
        'mllp;help;soak' {
            break
        }
        'mllp;help;show' {
            break
        }
        'mllp;help;check' {
            break
        }
        'mllp;help;diff' {
            break
        }
        'mllp;help;deid' {
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
