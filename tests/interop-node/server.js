'use strict'
// node-hl7-server as an MLLP receiver for the interop tests: binds 127.0.0.1 on a free port,
// answers every message its handler is given with the ACK code in argv[2], prints its port,
// then one `RECV <MSH-10>` line per handler call (as the library parsed the message).
const { Server } = require('node-hl7-server')

const code = process.argv[2] || 'AA'
const server = new Server({ bindAddress: '127.0.0.1' })
const inbound = server.createInbound({ port: 0 }, async (req, res) => {
  const message = req.getMessage()
  console.log(`RECV ${message.get('MSH.10').toString()}`)
  await res.sendResponse(code)
})
// The library has no accessor for the bound port; its listening socket is `_socket`.
inbound.on('listen', () => console.log(String(inbound._socket.address().port)))
inbound.on('error', (err) => {
  console.error(`server error: ${err.message}`)
  process.exit(1)
})
inbound.on('data.error', (err) => console.error(`data error: ${err.message}`))
