# python-hl7's asyncio MLLP server (hl7.mllp.start_hl7_server) as a benchmark peer: binds
# 127.0.0.1 on a free port, prints the port, and answers every message with the library's own
# ACK (Message.create_ack("AA"), which names the message's MSH-10). Prints nothing per message.
import asyncio

from hl7.mllp import start_hl7_server


async def handle(reader, writer):
    try:
        while not writer.is_closing():
            message = await reader.readmessage()
            writer.writemessage(message.create_ack("AA"))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    server = await start_hl7_server(handle, host="127.0.0.1", port=0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
