
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
            cand --host 'Host to send to'
            cand --port 'Port to send to'
            cand --max-input 'Most bytes of stdin spooled for checking (K, M, G suffixes)'
            cand --ca 'Extra CA certificate(s) to trust, PEM. Implies --tls'
            cand --cert 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key'
            cand --key 'Client private key for mutual TLS, PEM. Needs --cert'
            cand --server-name 'Name to send as SNI and to verify the certificate against (default: the host)'
            cand --connect-timeout 'Bound on TCP connect plus TLS handshake'
            cand --ack-timeout 'How long to wait for an ACK, from the moment the frame is flushed'
            cand --app-ack-timeout 'How long to wait for the application ACK after a CA (enhanced mode)'
            cand --keepalive 'TCP keepalive interval (off by default)'
            cand --dead-peer-timeout 'Drop and reconnect a link that receives nothing for this long (off by default)'
            cand --drain-timeout 'How long closing waits for the ACKs of messages already written'
            cand --max-retries 'Stop after this many failed reconnect attempts in a row'
            cand --give-up-after 'Stop reconnecting after this long without a working connection'
            cand --backoff-initial 'First reconnect delay'
            cand --backoff-max 'Largest reconnect delay'
            cand --backoff-multiplier 'Factor between consecutive reconnect delays'
            cand --backoff-jitter 'Random spread of each delay, as a fraction (0.2 = +/-20 %)'
            cand --correlate 'How ACKs are matched to messages (see the resend policy below)'
            cand --window 'Messages written and not yet acknowledged, at most'
            cand --window-bytes 'Payload bytes written and not yet acknowledged, at most (K, M, G suffixes)'
            cand --rate 'Send at most this many messages per second (`200` or `200/s`)'
            cand --max-resends 'Most times one message is resent after reconnects'
            cand --failed-out 'Write every message that did not end accepted to DIR, one file each'
            cand --progress 'Progress bar on stderr'
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand -r 'Walk directories given as inputs'
            cand --recursive 'Walk directories given as inputs'
            cand --raw 'Send segment terminators as they are (no CRLF/LF -> CR normalisation)'
            cand --batch 'Send each batch envelope (FHS/BHS ... BTS/FTS) as one frame instead of its messages'
            cand --stream 'Read stdin as it comes, endlessly, without checking it first'
            cand --tls 'Speak TLS (verification on, against the system roots plus --ca)'
            cand --insecure 'Accept any server certificate. Prints a security warning on every connect'
            cand --no-reconnect 'Do not reconnect after a transient failure'
            cand --no-pipeline 'One message at a time: write, wait for its ACK, then the next'
            cand --at-least-once 'FIFO: also resend messages of unknown fate after a reconnect (risk: duplicates)'
            cand --json 'NDJSON on stdout: one record per message, then a summary record'
            cand --print-ack 'Show each ACK payload (in --json, a field `ack`)'
            cand --events 'Print connection state changes and reconnects on stderr as they happen'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'mllp;listen'= {
            cand --host 'Address to bind. A wildcard (0.0.0.0, ::) needs --allow-wildcard'
            cand --port 'Port to bind; 0 picks a free one (the `listening` event says which)'
            cand --format 'How the stdout sink prints each message'
            cand --out-dir 'Commit each message as one fsynced .hl7 file in DIR instead of printing it'
            cand --exec 'Commit each message by piping it to `sh -c CMD` (env MLLP_PEER, MLLP_CONTROL_ID, MLLP_MESSAGE_TYPE); exit 0 commits, --reject-exit-code rejects, anything else fails'
            cand --reject-exit-code 'The --exec exit status that rejects a message (AR/CR)'
            cand --exec-timeout 'Kill an --exec command still running after this long and fail its message (AE/CE)'
            cand --exec-concurrency '--exec commands running at once'
            cand --ack 'How to answer: `auto` follows MSH-15 and the commit; `none` never answers; a code forces it for testing (still never positive for an uncommitted or damaged message)'
            cand --max-frame-size 'Largest payload accepted, in bytes (suffixes K, KiB, M, MiB); larger frames end the connection'
            cand --max-connections 'Connections open at once; extra peers are accepted and closed at once'
            cand --idle-timeout 'Close a connection that sends nothing for this long (default: never)'
            cand --drain-timeout 'On SIGINT/SIGTERM, how long commits under way may take to finish and be acknowledged'
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand --allow-wildcard 'Allow binding every interface (prints security warning MLLP_BIND_ALL_INTERFACES)'
            cand --strict 'Turn every framing tolerance off (FS without CR, LF after FS, whitespace before VT)'
            cand -v 'More detail on stderr (repeat for more)'
            cand --verbose 'More detail on stderr (repeat for more)'
            cand -q 'Only errors and the final summary on stderr'
            cand --quiet 'Only errors and the final summary on stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'mllp;probe'= {
            cand --host 'The host, instead of the positional HOST'
            cand --port 'The port (default 2575), when the target does not name one'
            cand --ca 'Extra CA certificate(s) to trust, PEM. Implies --tls'
            cand --cert 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key'
            cand --key 'Client private key for mutual TLS, PEM. Needs --cert'
            cand --server-name 'Name to send as SNI and to verify the certificate against (default: the host)'
            cand --message 'Send the first message of FILE instead (line ends normalised to CR). Implies --send'
            cand --banner-wait 'How long to listen for unsolicited bytes after connecting (0 skips it). A receiver should stay silent; bytes mean the peer is not MLLP'
            cand --timeout 'Sets the connect, TLS and ACK timeouts at once (the specific flags win)'
            cand --connect-timeout 'Bound on name resolution, and on the TCP connect over all addresses [default: 5s]'
            cand --tls-timeout 'Bound on the TLS handshake [default: 5s]'
            cand --ack-timeout 'Bound on the wait for the ACK, from the start of the write [default: 10s]'
            cand --count 'Probe this many times, one line each, then statistics per phase'
            cand --interval 'Pause between probes with --count'
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand --tls 'Speak TLS (verification on, against the system roots plus --ca)'
            cand --insecure 'Accept any server certificate. Prints a security warning on every connect'
            cand --send 'Send one message and wait for its ACK (a synthetic ADT^A01 with processing ID D and a unique control ID, unless --message)'
            cand --json 'One JSON object per probe on stdout (and a summary object after several)'
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
            cand --host 'The peer to drive. Without it, an embedded listener on 127.0.0.1 takes the load'
            cand --port 'The peer''s port'
            cand --template 'Message templates: the first message of each file, used in turn. Each message sent gets a unique MSH-10 and a fresh MSH-7'
            cand -c 'Connections, one client each'
            cand --connections 'Connections, one client each'
            cand --rate 'Total messages per second, spread evenly over the connections (`2000` or `2000/s`). Unset: as fast as the window allows'
            cand --duration 'Stop generating after this long'
            cand --messages 'Stop after this many messages in total'
            cand --ramp-up 'Climb linearly to --rate over this long (without --rate: start the connections one by one over this long)'
            cand --window 'Messages written and not yet acknowledged, per connection'
            cand --chaos 'Inject faults: comma-separated kind=probability[:duration] with kinds reset, nack, delay, stall, drop (e.g. reset=0.01,delay=0.1:50ms,drop=0.0005:3s)'
            cand --seed 'Seed for the fault dice and the run''s control IDs'
            cand --out-dir 'Embedded listener: commit each message as an fsynced file in DIR instead of memory'
            cand --report 'Write the report (JSON) to FILE'
            cand --live 'The live view: auto (when stderr is a terminal), always, never'
            cand --report-interval 'How often a plain progress line is printed when the live view is off'
            cand --metrics 'Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898)'
            cand --max-p99 'Fail (exit 6) when the p99 latency is above this'
            cand --max-error-rate 'Fail (exit 6) when more than this fraction of messages did not end accepted'
            cand --min-throughput 'Fail (exit 6) when fewer messages than this were accepted per second'
            cand --merge 'Combine these reports into one on stdout, and run nothing'
            cand --ca 'Extra CA certificate(s) to trust, PEM. Implies --tls'
            cand --cert 'Client certificate chain for mutual TLS, PEM. Implies --tls; needs --key'
            cand --key 'Client private key for mutual TLS, PEM. Needs --cert'
            cand --server-name 'Name to send as SNI and to verify the certificate against (default: the host)'
            cand --connect-timeout 'Bound on TCP connect plus TLS handshake'
            cand --ack-timeout 'How long to wait for an ACK, from the moment the frame is flushed'
            cand --app-ack-timeout 'How long to wait for the application ACK after a CA (enhanced mode)'
            cand --keepalive 'TCP keepalive interval (off by default)'
            cand --dead-peer-timeout 'Drop and reconnect a link that receives nothing for this long (off by default)'
            cand --drain-timeout 'How long closing waits for the ACKs of messages already written'
            cand --max-retries 'Stop after this many failed reconnect attempts in a row'
            cand --give-up-after 'Stop reconnecting after this long without a working connection'
            cand --backoff-initial 'First reconnect delay'
            cand --backoff-max 'Largest reconnect delay'
            cand --backoff-multiplier 'Factor between consecutive reconnect delays'
            cand --backoff-jitter 'Random spread of each delay, as a fraction (0.2 = +/-20 %)'
            cand --color 'When to colour output'
            cand --log-format 'Format of diagnostics on stderr'
            cand --allow-synthetic 'Send the built-in synthetic ADT^A01 (processing ID T) to a real --host'
            cand --json 'Print the report as JSON on stdout (and no live view)'
            cand --tls 'Speak TLS (verification on, against the system roots plus --ca)'
            cand --insecure 'Accept any server certificate. Prints a security warning on every connect'
            cand --no-reconnect 'Do not reconnect after a transient failure'
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
