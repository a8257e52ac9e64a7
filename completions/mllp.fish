# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mllp_global_optspecs
    string join \n v/verbose q/quiet color= log-format= h/help V/version
end

function __fish_mllp_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_mllp_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_mllp_using_subcommand
    set -l cmd (__fish_mllp_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c mllp -n "__fish_mllp_needs_command" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_needs_command" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_needs_command" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_needs_command" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_needs_command" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_needs_command" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "send" -d 'Send HL7 files to an MLLP endpoint and account for every message'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "listen" -d 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "relay" -d 'Stand between two systems: forward, show, bridge TLS, queue while the upstream is down'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "probe" -d 'Find out why an endpoint will not talk: resolve, connect, TLS, and one message'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "soak" -d 'Hold a link under load, watch it fail and heal, and prove nothing was lost'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "show" -d 'Show what HL7 messages hold: an outline of their fields, or the values at paths'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "check" -d 'Check whether HL7 messages are well formed, by the standard\'s rules and a site\'s'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "diff" -d 'Compare two sets of messages, paired by key, field by field'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "deid" -d 'Write the same messages with their patients replaced, consistently under a key'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "man" -d 'Print the man page, or write one per subcommand into a directory'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-frame-size -d 'Largest message sent (K, M, G)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-input -d 'Most bytes of stdin spooled for checking (K, M, G)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l from-db -d 'Replay a listen --sqlite or relay store, in arrival order' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l since -d 'With --from-db: rows that arrived at TIME (RFC 3339, UTC) or later' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l until -d 'With --from-db: rows that arrived before TIME (RFC 3339, UTC)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l type -d 'With --from-db: messages of this MSH-9, by leading components' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l control-id -d 'With --from-db: the message with this MSH-10' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l status -d 'With a relay store: rows whose upstream fate is STATUS (repeatable)' -r -f -a "pending\t''
accepted\t''
negative\t''
unknown-fate\t''
never-delivered\t''"
complete -c mllp -n "__fish_mllp_using_subcommand send" -l pace -d 'With --from-db: `original` keeps the recorded gaps' -r -f -a "original\t'The gaps between the messages\' recorded arrival times'"
complete -c mllp -n "__fish_mllp_using_subcommand send" -l speed -d 'With --pace original: the gaps this many times shorter' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l where -d 'Send only the messages for which FILTER holds (repeat: all must hold)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-gap -d 'With --pace original: wait at most this long between two messages' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l host -d 'Where to send: HOST or HOST:PORT; repeatable' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l accept -d 'Wait for the engine to connect on [HOST:]PORT; send over that' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l failover-after -d 'Next --host after N failed connects in a row' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l failback-after -d 'Back to the first --host after this long away' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l port -d 'Port, when --host has none [default: 2575]' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l connect-timeout -d 'Bound on TCP connect plus TLS handshake' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l ack-timeout -d 'Wait for an ACK, from the frame\'s flush' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l app-ack-timeout -d 'Wait for the application ACK after a CA' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l keepalive -d 'TCP keepalive interval (default: off)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l dead-peer-timeout -d 'Reconnect after hearing nothing this long (default: off)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l drain-timeout -d 'On closing, wait for ACKs of messages written' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-retries -d 'Stop after N failed reconnect attempts in a row' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l give-up-after -d 'Stop reconnecting after this long' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l backoff-initial -d 'First reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l backoff-max -d 'Largest reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l backoff-multiplier -d 'Factor between consecutive reconnect delays' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l backoff-jitter -d 'Random spread of each delay (0.2 = +/-20 %)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l ca -d 'Extra CA certificate(s) to trust, PEM; implies --tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l cert -d 'Client certificate chain (PEM) for mutual TLS; needs --key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l key -d 'Client private key (PEM) for mutual TLS; needs --cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l server-name -d 'Name for SNI and the certificate check (default: the host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l correlate -d 'How ACKs are matched to messages (see --help)' -r -f -a "fifo\t'Each reply answers the oldest unanswered message (for peers whose MSA-2 cannot be trusted)'
control-id\t'MSA-2 names the message\'s MSH-10; ACKs may come in any order; enhanced mode'"
complete -c mllp -n "__fish_mllp_using_subcommand send" -l window -d 'Messages written and not yet acknowledged, at most' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l window-bytes -d 'Payload bytes written and not yet acknowledged, at most' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l connections -d 'Connections side by side; above 1 needs --order-key' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l order-key -d 'What keeps order over --connections: a path (PID-3), or none' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l rate -d 'Send at most this many messages per second (`200` or `200/s`)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l timeout -d 'Bound on the whole run, like curl\'s --max-time' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-resends -d 'Most times one message is written again' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l retry-on -d 'Make a negative answer transient (repeatable), e.g. AE:206' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-poison-closes -d 'Closes on one message that make it a poison message' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l failed-out -d 'Write each message not accepted to DIR, one file each' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l progress -d 'Progress bar on stderr: auto, always, never' -r -f -a "auto\t'When stderr is a terminal, and not under --json or --quiet'
always\t'Always, even when stderr is not a terminal (never under --log-format json)'
never\t'Never'"
complete -c mllp -n "__fish_mllp_using_subcommand send" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand send" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand send" -s r -l recursive -d 'Walk directories given as inputs'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l raw -d 'Send segment terminators as they are (no CRLF/LF -> CR)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l batch -d 'Send each batch envelope (FHS/BHS ... BTS/FTS) as one frame'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l stream -d 'Read stdin as it comes, endlessly, without checking it first'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l fresh-control-ids -d 'Give every message a unique MSH-10 of its own'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l check-hl7 -d 'Send nothing unless every message is well formed (as mllp check)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l dry-run -d 'Check and list what would be sent; connect to nothing'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l allow-wildcard -d 'Allow a wildcard --accept address (warns)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l no-reconnect -d 'Do not reconnect after a transient failure'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l tls -d 'Speak TLS, verifying the server against the system roots and --ca'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l insecure -d 'Accept any server certificate (warns on every connect)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l no-pipeline -d 'One message at a time: write, wait for its ACK, then the next'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l mllp2 -d 'Speak MLLP Release 2 (commit and NAK blocks)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l at-least-once -d 'FIFO: also rewrite unanswered messages after a reconnect'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l json -d 'NDJSON on stdout: one record per message, then a summary record'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l print-ack -d 'Show each ACK payload (in --json, a field `ack`)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l events -d 'Print connection state changes and reconnects as they happen'
complete -c mllp -n "__fish_mllp_using_subcommand send" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand send" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l host -d 'Address to bind (a wildcard needs --allow-wildcard)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l port -d 'Port to bind; 0 picks a free one' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l dial -d 'Connect out to HOST[:PORT] instead of listening (one endpoint)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l proxy-from -d 'Addresses trusted to send PROXY headers [default: loopback]' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l format -d 'The stdout sink\'s format: hl7, json, raw [default: hl7]' -r -f -a "hl7\t'Segments as lines, a blank line after each message'
json\t'One JSON object per message per line'
raw\t'Each message re-framed as MLLP, byte for byte'"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l out-dir -d 'Commit each message as one fsynced .hl7 file in DIR' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l sqlite -d 'Commit each message as a row of table `messages` in SQLite FILE' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l postgres -d 'Commit each message as a row of table `messages` in PostgreSQL' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l exec -d 'Commit each message by piping it to `sh -c CMD`' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l reject-exit-code -d 'The --exec exit status that rejects a message (AR/CR)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l exec-timeout -d 'Kill an --exec command and its group after this long' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l exec-concurrency -d '--exec commands running at once' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l ack -d 'How to answer: auto, none, or a forced code (AA, AE, ...)' -r -f -a "auto\t''
none\t''
AA\t''
AE\t''
AR\t''
CA\t''
CE\t''
CR\t''"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l dedupe-window -d 'Messages --dedupe remembers (not with a database sink)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l ack-delay -d 'Hold every ACK back this long after the commit' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l nack-rate -d 'Share (0..1) not committed, answered AE/CE' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l reject-rate -d 'Share (0..1) not committed, answered AR/CR' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l silent-rate -d 'Share (0..1) committed, never answered' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l drop-after -d 'Answer N messages on each connection, then close it' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l seed -d 'Seed for the rates (default: from the clock, shown in the stats)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l tls-cert -d 'Serve TLS with this certificate chain (PEM)' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l client-ca -d 'Roots (PEM) client certificates are verified against' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l client-auth -d 'Client certificates: none, want, must' -r -f -a "none\t''
want\t''
must\t''"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l tls-handshake-timeout -d 'Bound on a client\'s TLS handshake' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l ca -d 'Extra CA certificate(s) to trust, PEM; implies --tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l cert -d 'Client certificate chain (PEM) for mutual TLS; needs --key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l key -d 'Client private key (PEM) for mutual TLS; needs --cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l server-name -d 'Name for SNI and the certificate check (default: the host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l max-frame-size -d 'Largest payload accepted (K, M, G suffixes)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l max-connections -d 'Connections open at once' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l max-connections-per-peer -d 'Connections per address [default: --max-connections / 4]' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l frame-timeout -d 'Bound on receiving one frame; 0 turns it off' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l max-buffered -d 'Memory held for all peers' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l idle-timeout -d 'Close a link idle this long (default: never)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l evict-idle-after -d 'At the cap, evict one idle this long; 0: never' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l drain-timeout -d 'On a stop, how long commits under way may take' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l log-rate -d 'Message lines a second per connection; 0: no limit' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l log-rate-total -d 'Message lines a second, all together; 0: no limit' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l metrics -d 'Serve Prometheus metrics over HTTP on ADDR (e.g. 127.0.0.1:9898)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l allow-wildcard -d 'Allow a wildcard --host or --metrics (warns MLLP_BIND_ALL_INTERFACES)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l proxy-protocol -d 'Take peer addresses from a load balancer\'s PROXY header (v1 or v2)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l dedupe -d 'Answer a repeated message positively without committing it again'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l batch-ack -d 'Commit a batch (FHS/BHS) as one unit and answer it with one ACK'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l mllp2 -d 'Speak MLLP Release 2 (commit and NAK blocks)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l tls -d 'Speak TLS, verifying the server against the system roots and --ca'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l insecure -d 'Accept any server certificate (warns on every connect)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l strict -d 'Turn every framing tolerance off'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l json -d 'JSON: --log-format json, and --format json when stdout is the sink'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l listen -d 'Where to listen: PORT or HOST:PORT (host default 127.0.0.1)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l to -d 'Where to forward: HOST[:PORT], repeatable [default port: 2575]' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l failover-after -d 'Next --to after N failed connects in a row [default: 3]' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l failback-after -d 'Back to the first --to after this long away' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l connect-timeout -d 'Bound on TCP connect plus TLS handshake' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l ack-timeout -d 'Wait for an ACK, from the frame\'s flush' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l app-ack-timeout -d 'Wait for the application ACK after a CA' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l keepalive -d 'TCP keepalive interval (default: off)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l dead-peer-timeout -d 'Reconnect after hearing nothing this long (default: off)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l drain-timeout -d 'On closing, wait for ACKs of messages written' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l backoff-initial -d 'First reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l backoff-multiplier -d 'Factor between consecutive reconnect delays' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l backoff-jitter -d 'Random spread of each delay (0.2 = +/-20 %)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l ca -d 'Extra CA certificate(s) to trust, PEM; implies --tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l cert -d 'Client certificate chain (PEM) for mutual TLS; needs --key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l key -d 'Client private key (PEM) for mutual TLS; needs --cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l server-name -d 'Name for SNI and the certificate check (default: the host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l tls-cert -d 'Serve TLS with this certificate chain (PEM)' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l client-ca -d 'Roots (PEM) client certificates are verified against' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l client-auth -d 'Client certificates: none, want, must' -r -f -a "none\t''
want\t''
must\t''"
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l tls-handshake-timeout -d 'Bound on a client\'s TLS handshake' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror -d 'Copy every message to a shadow engine [default port: 2575]' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror-queue -d 'Most copies held for the shadow' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror-compare -d 'What of the two answers is compared' -r -f -a "answer\t'MSA-1 (the code), MSA-3 (the text) and every ERR segment'
ack\t'The whole ACK but MSH-7, MSH-10 and the --ignore paths'"
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l ignore -d 'A segment or field --mirror-compare ack leaves out (repeatable)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror-ca -d 'Extra CA certificate(s) for the shadow, PEM; implies --mirror-tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror-cert -d 'Client certificate chain (PEM) for the shadow; needs --mirror-key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror-key -d 'Client private key (PEM) for the shadow; needs --mirror-cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror-server-name -d 'Name for SNI and the shadow\'s certificate (default: its host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l max-frame-size -d 'Largest payload accepted (K, M, G suffixes)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l max-connections -d 'Connections open at once' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l max-connections-per-peer -d 'Connections per address [default: --max-connections / 4]' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l frame-timeout -d 'Bound on receiving one frame; 0 turns it off' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l max-buffered -d 'Memory held for all peers' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l idle-timeout -d 'Close a link idle this long (default: never)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l evict-idle-after -d 'At the cap, evict one idle this long; 0: never' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l log-rate -d 'Message lines a second per connection; 0: no limit' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l log-rate-total -d 'Message lines a second, all together; 0: no limit' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l window -d 'Messages written upstream and not yet acknowledged, at most' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l queue -d 'Store and forward through table `queue` of SQLite FILE' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l max-queue -d 'With --queue: most pending rows (beyond: AE, nothing kept)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l record -d 'Keep each message, its upstream answer and timings in SQLite FILE' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l metrics -d 'Serve Prometheus metrics over HTTP on ADDR (as listen does)' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l backoff-max -d 'Largest reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l allow-wildcard -d 'Allow a wildcard --listen (warns MLLP_BIND_ALL_INTERFACES)'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mllp2-downstream -d 'Answer downstream in MLLP Release 2 (commit, NAK blocks)'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mllp2-upstream -d 'Speak MLLP Release 2 upstream (as send --mllp2)'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l tls -d 'Speak TLS, verifying the server against the system roots and --ca'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l insecure -d 'Accept any server certificate (warns on every connect)'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror-tls -d 'Speak TLS to the shadow (as --tls to the upstream)'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l mirror-insecure -d 'Accept any certificate from the shadow (warns on every connect)'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -l strict -d 'Turn every framing tolerance off'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand relay" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l host -d 'Endpoint instead of the positional; repeatable' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l port -d 'Port if the endpoint has none [default: 2575]' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l timeout -d 'Connect, TLS and ACK timeouts at once (specific flags win)' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l connect-timeout -d 'Bound on resolving and connecting [default: 5s].' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l tls-timeout -d 'Bound on the TLS handshake [default: 5s].' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l ack-timeout -d 'Bound on the wait for the ACK, from the write [default: 10s].' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l ca -d 'Extra CA certificate(s) to trust, PEM; implies --tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l cert -d 'Client certificate chain (PEM) for mutual TLS; needs --key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l key -d 'Client private key (PEM) for mutual TLS; needs --cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l server-name -d 'Name for SNI and the certificate check (default: the host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l message -d 'Send the first message of FILE instead; implies --send' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l banner-wait -d 'Listen this long for unsolicited bytes (0 skips) [default: 500ms].' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l count -d 'Probe N times, one line each, then statistics' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l interval -d 'Pause between probes with --count' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l tls -d 'Speak TLS, verifying the server against the system roots and --ca'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l insecure -d 'Accept any server certificate (warns on every connect)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l send -d 'Send one message and wait for its ACK (proves MLLP is spoken)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l mllp2 -d 'Expect MLLP Release 2 (a commit or NAK block); implies --send'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l json -d 'One JSON object per probe on stdout (then a summary after several)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l template -d 'Message templates: the first message of each FILE, in turn' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l host -d 'Peer to drive, HOST[:PORT] (default: embedded listener)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l failover-after -d 'Next --host after N failed connects in a row' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l failback-after -d 'Back to the first --host after this long away (default: never)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l port -d 'Port, when --host has none [default: 2575]' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l connect-timeout -d 'Bound on TCP connect plus TLS handshake' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l ack-timeout -d 'Wait for an ACK, from the frame\'s flush' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l app-ack-timeout -d 'Wait for the application ACK after a CA' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l keepalive -d 'TCP keepalive interval (default: off)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l dead-peer-timeout -d 'Reconnect after hearing nothing this long (default: off)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l drain-timeout -d 'On closing, wait for ACKs of messages written' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l max-retries -d 'Stop after N failed reconnect attempts in a row' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l give-up-after -d 'Stop reconnecting after this long' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l backoff-initial -d 'First reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l backoff-max -d 'Largest reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l backoff-multiplier -d 'Factor between consecutive reconnect delays' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l backoff-jitter -d 'Random spread of each delay (0.2 = +/-20 %)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l ca -d 'Extra CA certificate(s) to trust, PEM; implies --tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l cert -d 'Client certificate chain (PEM) for mutual TLS; needs --key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l key -d 'Client private key (PEM) for mutual TLS; needs --cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l server-name -d 'Name for SNI and the certificate check (default: the host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s c -l connections -d 'Connections, one client each' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l rate -d 'Total messages per second over all connections (`2000` or `2000/s`)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l duration -d 'Stop generating after this long' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l messages -d 'Stop after this many messages in total' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l ramp-up -d 'Climb linearly to --rate over this long' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l window -d 'Messages in flight per connection, at most' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l chaos -d 'Inject faults: kind=probability[:duration],... (see --help)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l seed -d 'Seed for the fault dice and the run\'s control IDs' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l out-dir -d 'Embedded listener: commit each message as an fsynced file in DIR' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l max-p99 -d 'Fail (exit 6) when the p99 latency is above this' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l max-error-rate -d 'Fail (exit 6) when more than this share did not end accepted' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l min-throughput -d 'Fail (exit 6) when fewer than N were accepted per second' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l report -d 'Write the report (JSON) to FILE' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l live -d 'The live view on stderr: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l report-interval -d 'Progress line interval without the live view' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l metrics -d 'Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l merge -d 'Combine these reports into one on stdout, and run nothing' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l allow-synthetic -d 'Send the built-in synthetic ADT^A01 (processing ID T) to a real --host'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l no-reconnect -d 'Do not reconnect after a transient failure'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l tls -d 'Speak TLS, verifying the server against the system roots and --ca'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l insecure -d 'Accept any server certificate (warns on every connect)'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l json -d 'Print the report as JSON on stdout (and no live view)'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand show" -l from-db -d 'Read the messages of a listen --sqlite or relay store' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand show" -l postgres -d 'Read the messages of a listen --postgres store' -r
complete -c mllp -n "__fish_mllp_using_subcommand show" -l where -d 'Only the messages for which FILTER holds (repeat: all must hold)' -r
complete -c mllp -n "__fish_mllp_using_subcommand show" -l charset -d 'Read text in this character set, whatever MSH-18 says' -r
complete -c mllp -n "__fish_mllp_using_subcommand show" -l max-frame-size -d 'Largest message read (K, M, G)' -r
complete -c mllp -n "__fish_mllp_using_subcommand show" -l get -d 'Print the value at PATH, one line per message (repeat for more columns)' -r
complete -c mllp -n "__fish_mllp_using_subcommand show" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand show" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand show" -s r -l recursive -d 'Walk directories given as inputs'
complete -c mllp -n "__fish_mllp_using_subcommand show" -l json -d 'One JSON object per message'
complete -c mllp -n "__fish_mllp_using_subcommand show" -l raw -d 'Values as written: escape sequences left as they are'
complete -c mllp -n "__fish_mllp_using_subcommand show" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand show" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand show" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand show" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand check" -l from-db -d 'Read the messages of a listen --sqlite or relay store' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand check" -l postgres -d 'Read the messages of a listen --postgres store' -r
complete -c mllp -n "__fish_mllp_using_subcommand check" -l where -d 'Only the messages for which FILTER holds (repeat: all must hold)' -r
complete -c mllp -n "__fish_mllp_using_subcommand check" -l charset -d 'Read text in this character set, whatever MSH-18 says' -r
complete -c mllp -n "__fish_mllp_using_subcommand check" -l max-frame-size -d 'Largest message read (K, M, G)' -r
complete -c mllp -n "__fish_mllp_using_subcommand check" -l profile -d 'A site\'s own rules on top of the standard\'s (TOML or JSON)' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand check" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand check" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand check" -s r -l recursive -d 'Walk directories given as inputs'
complete -c mllp -n "__fish_mllp_using_subcommand check" -l json -d 'One JSON object per finding, then the summary'
complete -c mllp -n "__fish_mllp_using_subcommand check" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand check" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand check" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand check" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand diff" -l key -d 'What pairs a message of A with one of B (repeat for several) [default: MSH-10]' -r
complete -c mllp -n "__fish_mllp_using_subcommand diff" -l ignore -d 'Leave a path or a whole segment out of the comparison (repeat)' -r
complete -c mllp -n "__fish_mllp_using_subcommand diff" -l where -d 'Only the messages for which FILTER holds, on both sides (repeat: all must hold)' -r
complete -c mllp -n "__fish_mllp_using_subcommand diff" -l charset -d 'Read text in this character set, whatever MSH-18 says' -r
complete -c mllp -n "__fish_mllp_using_subcommand diff" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand diff" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand diff" -l json -d 'NDJSON on stdout: one record per finding, then a summary record'
complete -c mllp -n "__fish_mllp_using_subcommand diff" -l no-values -d 'Say where pairs differ, without the values (for logs)'
complete -c mllp -n "__fish_mllp_using_subcommand diff" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand diff" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand diff" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand diff" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand deid" -l from-db -d 'Read the messages of a listen --sqlite or relay store, in arrival order' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand deid" -l where -d 'Only the messages for which FILTER holds (repeat: all must hold)' -r
complete -c mllp -n "__fish_mllp_using_subcommand deid" -l key-file -d 'The key every replacement is derived from (64 hexadecimal digits; see --new-key)' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand deid" -l new-key -d 'Write a new random key to FILE (readable by you alone) and stop' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand deid" -l policy -d 'Add to or change the standard policy: TOML, or JSON when FILE ends in .json' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand deid" -l out -d 'Where the messages go: a directory (absent or empty; one file per input, named as it) or `-` for stdout' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand deid" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand deid" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand deid" -s r -l recursive -d 'Walk directories given as inputs (their layout is kept under --out)'
complete -c mllp -n "__fish_mllp_using_subcommand deid" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand deid" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand deid" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand deid" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand completions" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand completions" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand completions" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand completions" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand completions" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand completions" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand man" -l dir -d 'Write mllp.1 and one page per subcommand into DIR' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand man" -l color -d 'When to colour output: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand man" -l log-format -d 'Diagnostics on stderr as human or json lines' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand man" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand man" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand man" -s h -l help -d 'Print help (-h: one line per flag; --help: more detail)'
complete -c mllp -n "__fish_mllp_using_subcommand man" -s V -l version -d 'Print the version'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "send" -d 'Send HL7 files to an MLLP endpoint and account for every message'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "listen" -d 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "relay" -d 'Stand between two systems: forward, show, bridge TLS, queue while the upstream is down'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "probe" -d 'Find out why an endpoint will not talk: resolve, connect, TLS, and one message'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "soak" -d 'Hold a link under load, watch it fail and heal, and prove nothing was lost'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "show" -d 'Show what HL7 messages hold: an outline of their fields, or the values at paths'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "check" -d 'Check whether HL7 messages are well formed, by the standard\'s rules and a site\'s'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "diff" -d 'Compare two sets of messages, paired by key, field by field'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "deid" -d 'Write the same messages with their patients replaced, consistently under a key'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "completions" -d 'Print a shell completion script'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "man" -d 'Print the man page, or write one per subcommand into a directory'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen relay probe soak show check diff deid completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
