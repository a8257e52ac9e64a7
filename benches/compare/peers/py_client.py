# python-hl7 as a benchmark sender: `py_client.py MODE PORT FILE WINDOW`.
#   mllp_send: hl7.client.MLLPClient.send_message, what the `mllp_send` script does per message
#              (blocking; one message, then one recv for its ACK), so WINDOW must be 1.
#   asyncio:   hl7.mllp.open_hl7_connection, at most WINDOW messages unacknowledged; each ACK
#              read with the library's readmessage.
# Every ACK must be AA naming the MSH-10 of the message it answers, in order. Prints one JSON
# line: messages, elapsed_s (connect to last ACK), cpu_s (this process over that interval),
# p50_us, p99_us. On a failure prints the reason on stderr and exits 1.
import asyncio
import json
import os
import re
import resource
import sys
import time

STALL_S = 10.0


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def split(data):
    starts = [m.start() for m in re.finditer(rb"(?:^|(?<=[\r\n]))MSH\|", data)]
    starts.append(len(data))
    return [data[a:b].rstrip(b"\n") for a, b in zip(starts, starts[1:])]


def control_id(message):
    return message.split(b"\r", 1)[0].split(b"|")[9].decode()


def fail(why):
    print(why, file=sys.stderr, flush=True)
    # At once, from inside a task too (SystemExit there would wait for the rest of the loop).
    os._exit(1)


def check(i, code, named, ids):
    if code != "AA" or named != ids[i]:
        fail(f"ACK {i + 1} is {code!r} naming {named!r}, not AA naming {ids[i]!r}")


def raw_msa(ack):
    at = ack.find(b"\rMSA|")
    if at < 0:
        return "", ""
    fields = ack[at + 5 :].split(b"\r", 1)[0].split(b"|")
    return fields[0].decode(), (fields[1].decode() if len(fields) > 1 else "")


def mllp_send(port, messages, ids, latencies):
    from hl7.client import MLLPClient

    with MLLPClient("127.0.0.1", port) as client:
        client.socket.settimeout(STALL_S)
        for i, message in enumerate(messages):
            sent = time.perf_counter()
            try:
                ack = client.send_message(message)
            except OSError as e:
                fail(f"no ACK for message {i + 1}: {e}")
            latencies.append(time.perf_counter() - sent)
            check(i, *raw_msa(ack), ids)


async def pipelined(port, messages, ids, window, latencies):
    from hl7.mllp import open_hl7_connection

    reader, writer = await asyncio.wait_for(open_hl7_connection("127.0.0.1", port), STALL_S)
    credit = asyncio.Semaphore(window)
    sent_at = [0.0] * len(messages)

    async def acks():
        for i in range(len(messages)):
            try:
                ack = await asyncio.wait_for(reader.readmessage(), STALL_S)
            except asyncio.TimeoutError:
                fail(f"stalled: no ACK for {STALL_S:.0f} s after {i} of {len(messages)} ACKs")
            except asyncio.IncompleteReadError:
                fail(f"the receiver closed after {i} of {len(messages)} ACKs")
            latencies.append(time.perf_counter() - sent_at[i])
            msa = ack.segment("MSA")
            check(i, str(msa(1)), str(msa(2)), ids)
            credit.release()

    reading = asyncio.create_task(acks())
    for i, message in enumerate(messages):
        await credit.acquire()
        sent_at[i] = time.perf_counter()
        writer.writeblock(message)
        await writer.drain()
    await reading
    writer.close()


def main():
    mode, port, path, window = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    messages = split(open(path, "rb").read())
    ids = [control_id(m) for m in messages]
    latencies = []
    cpu0, t0 = cpu(), time.perf_counter()
    if mode == "mllp_send":
        mllp_send(port, messages, ids, latencies)
    else:
        asyncio.run(pipelined(port, messages, ids, window, latencies))
    elapsed, used = time.perf_counter() - t0, cpu() - cpu0
    latencies.sort()
    pct = lambda p: latencies[max(0, int(-(-len(latencies) * p // 1)) - 1)] * 1e6
    print(json.dumps({"messages": len(messages), "elapsed_s": elapsed, "cpu_s": used,
                      "p50_us": pct(0.5), "p99_us": pct(0.99)}), flush=True)


main()
