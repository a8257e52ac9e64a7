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

complete -c mllp -n "__fish_mllp_needs_command" -l color -d 'When to colour output' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_needs_command" -l log-format -d 'Format of diagnostics on stderr' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_needs_command" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_needs_command" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_needs_command" -s h -l help -d 'Print help'
complete -c mllp -n "__fish_mllp_needs_command" -s V -l version -d 'Print version'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "send" -d 'Send HL7 files to an MLLP endpoint and account for every message'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "listen" -d 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "probe" -d 'Find out why an endpoint will not talk: resolve, connect, TLS, and optionally one message'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "soak" -d 'Hold a link under load, watch it fail and heal, and prove nothing was lost'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "man" -d 'Print the man page, or write one per subcommand into a directory'
complete -c mllp -n "__fish_mllp_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l host -d 'The endpoint: HOST or HOST:PORT (IPv6 in brackets: [fd00::7]:2575)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l port -d 'The port, when --host names none [default: 2575]' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-input -d 'Most bytes of stdin spooled for checking (K, M, G suffixes)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l ca -d 'Extra CA certificate(s) to trust, PEM. Implies --tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l cert -d 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l key -d 'Client private key for mutual TLS, PEM. Needs --cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l server-name -d 'Name to send as SNI and to verify the certificate against (default: the host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l connect-timeout -d 'Bound on TCP connect plus TLS handshake' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l ack-timeout -d 'How long to wait for an ACK, from the moment the frame is flushed' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l app-ack-timeout -d 'How long to wait for the application ACK after a CA (enhanced mode)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l keepalive -d 'TCP keepalive interval (off by default)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l dead-peer-timeout -d 'Drop and reconnect a link that receives nothing for this long (off by default)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l drain-timeout -d 'How long closing waits for the ACKs of messages already written' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-retries -d 'Stop after this many failed reconnect attempts in a row' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l give-up-after -d 'Stop reconnecting after this long without a working connection' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l backoff-initial -d 'First reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l backoff-max -d 'Largest reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l backoff-multiplier -d 'Factor between consecutive reconnect delays' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l backoff-jitter -d 'Random spread of each delay, as a fraction (0.2 = +/-20 %)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l correlate -d 'How ACKs are matched to messages (see the resend policy below)' -r -f -a "fifo\t'Each ACK answers the oldest unanswered message'
control-id\t'MSA-2 names the message\'s MSH-10; ACKs may come in any order; enhanced mode'"
complete -c mllp -n "__fish_mllp_using_subcommand send" -l window -d 'Messages written and not yet acknowledged, at most' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l window-bytes -d 'Payload bytes written and not yet acknowledged, at most (K, M, G suffixes)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l rate -d 'Send at most this many messages per second (`200` or `200/s`)' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l timeout -d 'Bound on the whole run: by then it has stopped and reported. Messages not yet written end never-delivered (run-timeout), written ones without an answer unknown-fate' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l max-resends -d 'Most times one message is resent after reconnects' -r
complete -c mllp -n "__fish_mllp_using_subcommand send" -l failed-out -d 'Write every message that did not end accepted to DIR, one file each' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand send" -l progress -d 'Progress bar on stderr' -r -f -a "auto\t'When stderr is a terminal, and not under --json or --quiet'
always\t'Always, even when stderr is not a terminal (never under --log-format json)'
never\t'Never'"
complete -c mllp -n "__fish_mllp_using_subcommand send" -l color -d 'When to colour output' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand send" -l log-format -d 'Format of diagnostics on stderr' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand send" -s r -l recursive -d 'Walk directories given as inputs'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l raw -d 'Send segment terminators as they are (no CRLF/LF -> CR normalisation)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l batch -d 'Send each batch envelope (FHS/BHS ... BTS/FTS) as one frame instead of its messages'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l stream -d 'Read stdin as it comes, endlessly, without checking it first'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l dry-run -d 'Read and check every input, list what would be sent, and connect to nothing'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l tls -d 'Speak TLS (verification on, against the system roots plus --ca)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l insecure -d 'Accept any server certificate. Prints a security warning on every connect'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l no-reconnect -d 'Do not reconnect after a transient failure'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l no-pipeline -d 'One message at a time: write, wait for its ACK, then the next'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l at-least-once -d 'FIFO: also resend messages of unknown fate after a reconnect (risk: duplicates)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l json -d 'NDJSON on stdout: one record per message, then a summary record'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l print-ack -d 'Show each ACK payload (in --json, a field `ack`)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -l events -d 'Print connection state changes and reconnects on stderr as they happen'
complete -c mllp -n "__fish_mllp_using_subcommand send" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand send" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand send" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mllp -n "__fish_mllp_using_subcommand send" -s V -l version -d 'Print version'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l host -d 'Address to bind. A wildcard (0.0.0.0, ::) needs --allow-wildcard' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l port -d 'Port to bind; 0 picks a free one (the `listening` event says which)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l format -d 'How the stdout sink prints each message' -r -f -a "hl7\t'Segments as lines, a blank line after each message'
json\t'One JSON object per message per line'
raw\t'Each message re-framed as MLLP, byte for byte'"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l out-dir -d 'Commit each message as one fsynced .hl7 file in DIR instead of printing it' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l sqlite -d 'Commit each message as a row of table `messages` in an SQLite database FILE (created on first use; WAL, full synchronous commits, one transaction per group of messages)' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l exec -d 'Commit each message by piping it to `sh -c CMD` (env MLLP_PEER, MLLP_CONTROL_ID, MLLP_MESSAGE_TYPE); exit 0 commits, --reject-exit-code rejects, anything else fails' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l reject-exit-code -d 'The --exec exit status that rejects a message (AR/CR)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l exec-timeout -d 'Kill an --exec command still running after this long and fail its message (AE/CE)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l exec-concurrency -d '--exec commands running at once' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l ack -d 'How to answer: `auto` follows MSH-15 and the commit; `none` never answers; a code forces it for testing (still never positive for an uncommitted or damaged message)' -r -f -a "auto\t''
none\t''
AA\t''
AE\t''
AR\t''
CA\t''
CE\t''
CR\t''"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l dedupe-window -d 'How many committed messages --dedupe remembers (not used with --sqlite: the table is the memory)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l ack-delay -d 'Test double: hold every ACK back this long after the commit' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l nack-rate -d 'Test double: this share of messages (0..1) is not committed and answered AE/CE' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l reject-rate -d 'Test double: this share of messages (0..1) is not committed and answered AR/CR' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l silent-rate -d 'Test double: this share of messages (0..1) is committed and never answered' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l drop-after -d 'Test double: answer N messages on each connection, then close it' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l seed -d 'Seed for the test-double rates (default: from the clock, printed in the stats)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l tls-cert -d 'Serve TLS with this certificate chain (PEM); needs --tls-key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l client-ca -d 'Roots (PEM) that client certificates are verified against; needed by --client-auth want|must' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l client-auth -d 'Client certificates: not asked for, asked for and verified when given, or required' -r -f -a "none\t''
want\t''
must\t''"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l tls-handshake-timeout -d 'A client that has not finished its TLS handshake within this long is dropped' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l metrics -d 'Serve Prometheus metrics over HTTP on ADDR (e.g. 127.0.0.1:9898)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l max-frame-size -d 'Largest payload accepted, in bytes (suffixes K, M, G, also KiB, MiB, GiB); larger frames end the connection' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l max-connections -d 'Connections open at once; extra peers are accepted and closed at once' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l idle-timeout -d 'Close a connection that sends nothing for this long (default: never)' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l drain-timeout -d 'On SIGINT/SIGTERM, how long commits under way may take to finish and be acknowledged' -r
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l color -d 'When to colour output' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l log-format -d 'Format of diagnostics on stderr' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l allow-wildcard -d 'Allow binding every interface (prints security warning MLLP_BIND_ALL_INTERFACES)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l dedupe -d 'Answer a message whose MSH-10 + MSH-7 was already committed positively, without committing it again (remembered in --out-dir\'s journal, or by a unique index with --sqlite)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l batch-ack -d 'Commit a batch frame (FHS/BHS) as one unit and answer it with a batch acknowledgement'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -l strict -d 'Turn every framing tolerance off (FS without CR, LF after FS, whitespace before VT)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mllp -n "__fish_mllp_using_subcommand listen" -s V -l version -d 'Print version'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l host -d 'The endpoint, instead of the positional HOST[:PORT]' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l port -d 'The port, when the endpoint names none [default: 2575]' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l message -d 'Send the first message of FILE instead (line ends normalised to CR). Implies --send' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l banner-wait -d 'How long to listen for unsolicited bytes after connecting (0 skips it). A receiver should stay silent; bytes mean the peer is not MLLP [default: 500ms].' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l timeout -d 'Sets the connect, TLS and ACK timeouts at once (the specific flags win)' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l connect-timeout -d 'Bound on name resolution, and on the TCP connect over all addresses [default: 5s].' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l tls-timeout -d 'Bound on the TLS handshake [default: 5s].' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l ack-timeout -d 'Bound on the wait for the ACK, from the start of the write [default: 10s].' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l count -d 'Probe this many times, one line each, then statistics per phase' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l interval -d 'Pause between probes with --count' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l ca -d 'Extra CA certificate(s) to trust, PEM. Implies --tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l cert -d 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l key -d 'Client private key for mutual TLS, PEM. Needs --cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l server-name -d 'Name to send as SNI and to verify the certificate against (default: the host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l color -d 'When to colour output' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l log-format -d 'Format of diagnostics on stderr' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l send -d 'Send one message and wait for its ACK (a synthetic ADT^A01 with processing ID D and a unique control ID, unless --message)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l json -d 'One JSON object per probe on stdout (and a summary object after several)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l tls -d 'Speak TLS (verification on, against the system roots plus --ca)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -l insecure -d 'Accept any server certificate. Prints a security warning on every connect'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -s h -l help -d 'Print help'
complete -c mllp -n "__fish_mllp_using_subcommand probe" -s V -l version -d 'Print version'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l host -d 'The peer to drive, HOST or HOST:PORT (IPv6 in brackets). Without it, an embedded listener on 127.0.0.1 takes the load. Never taken from the environment' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l port -d 'The peer\'s port, when --host names none [default: 2575]' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l template -d 'Message templates: the first message of each file, used in turn. Each message sent gets a unique MSH-10 and a fresh MSH-7' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s c -l connections -d 'Connections, one client each' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l rate -d 'Total messages per second, spread evenly over the connections (`2000` or `2000/s`). Unset: as fast as the window allows' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l duration -d 'Stop generating after this long' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l messages -d 'Stop after this many messages in total' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l ramp-up -d 'Climb linearly to --rate over this long (without --rate: start the connections one by one over this long)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l window -d 'Messages written and not yet acknowledged, per connection' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l chaos -d 'Inject faults: comma-separated kind=probability[:duration] with kinds reset, nack, delay, stall, drop (e.g. reset=0.01,delay=0.1:50ms,drop=0.0005:3s)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l seed -d 'Seed for the fault dice and the run\'s control IDs' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l out-dir -d 'Embedded listener: commit each message as an fsynced file in DIR instead of memory' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l report -d 'Write the report (JSON) to FILE' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l live -d 'The live view: auto (when stderr is a terminal), always, never. Under --log-format json it is never drawn: progress events come instead' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l report-interval -d 'How often a plain progress line (or progress event) is printed when the live view is off' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l metrics -d 'Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l max-p99 -d 'Fail (exit 6) when the p99 latency is above this' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l max-error-rate -d 'Fail (exit 6) when more than this fraction of messages did not end accepted' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l min-throughput -d 'Fail (exit 6) when fewer messages than this were accepted per second' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l merge -d 'Combine these reports into one on stdout, and run nothing' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l ca -d 'Extra CA certificate(s) to trust, PEM. Implies --tls' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l cert -d 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l key -d 'Client private key for mutual TLS, PEM. Needs --cert' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l server-name -d 'Name to send as SNI and to verify the certificate against (default: the host)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l connect-timeout -d 'Bound on TCP connect plus TLS handshake' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l ack-timeout -d 'How long to wait for an ACK, from the moment the frame is flushed' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l app-ack-timeout -d 'How long to wait for the application ACK after a CA (enhanced mode)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l keepalive -d 'TCP keepalive interval (off by default)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l dead-peer-timeout -d 'Drop and reconnect a link that receives nothing for this long (off by default)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l drain-timeout -d 'How long closing waits for the ACKs of messages already written' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l max-retries -d 'Stop after this many failed reconnect attempts in a row' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l give-up-after -d 'Stop reconnecting after this long without a working connection' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l backoff-initial -d 'First reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l backoff-max -d 'Largest reconnect delay' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l backoff-multiplier -d 'Factor between consecutive reconnect delays' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l backoff-jitter -d 'Random spread of each delay, as a fraction (0.2 = +/-20 %)' -r
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l color -d 'When to colour output' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l log-format -d 'Format of diagnostics on stderr' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l allow-synthetic -d 'Send the built-in synthetic ADT^A01 (processing ID T) to a real --host'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l json -d 'Print the report as JSON on stdout (and no live view)'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l tls -d 'Speak TLS (verification on, against the system roots plus --ca)'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l insecure -d 'Accept any server certificate. Prints a security warning on every connect'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -l no-reconnect -d 'Do not reconnect after a transient failure'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s h -l help -d 'Print help'
complete -c mllp -n "__fish_mllp_using_subcommand soak" -s V -l version -d 'Print version'
complete -c mllp -n "__fish_mllp_using_subcommand completions" -l color -d 'When to colour output' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand completions" -l log-format -d 'Format of diagnostics on stderr' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand completions" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand completions" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand completions" -s h -l help -d 'Print help'
complete -c mllp -n "__fish_mllp_using_subcommand completions" -s V -l version -d 'Print version'
complete -c mllp -n "__fish_mllp_using_subcommand man" -l dir -d 'Write `mllp.1` and one page per subcommand into this directory instead of printing `mllp.1`' -r -F
complete -c mllp -n "__fish_mllp_using_subcommand man" -l color -d 'When to colour output' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mllp -n "__fish_mllp_using_subcommand man" -l log-format -d 'Format of diagnostics on stderr' -r -f -a "human\t''
json\t''"
complete -c mllp -n "__fish_mllp_using_subcommand man" -s v -l verbose -d 'More detail on stderr (repeat for more)'
complete -c mllp -n "__fish_mllp_using_subcommand man" -s q -l quiet -d 'Only errors and the final summary on stderr'
complete -c mllp -n "__fish_mllp_using_subcommand man" -s h -l help -d 'Print help'
complete -c mllp -n "__fish_mllp_using_subcommand man" -s V -l version -d 'Print version'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen probe soak completions man help" -f -a "send" -d 'Send HL7 files to an MLLP endpoint and account for every message'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen probe soak completions man help" -f -a "listen" -d 'Receive HL7 over MLLP, commit each message to a sink, then acknowledge it'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen probe soak completions man help" -f -a "probe" -d 'Find out why an endpoint will not talk: resolve, connect, TLS, and optionally one message'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen probe soak completions man help" -f -a "soak" -d 'Hold a link under load, watch it fail and heal, and prove nothing was lost'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen probe soak completions man help" -f -a "completions" -d 'Print a shell completion script'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen probe soak completions man help" -f -a "man" -d 'Print the man page, or write one per subcommand into a directory'
complete -c mllp -n "__fish_mllp_using_subcommand help; and not __fish_seen_subcommand_from send listen probe soak completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
