'use strict'
// node-hl7-server as a benchmark receiver: binds 127.0.0.1 on a free port, prints the port, and
// answers every message its handler is given with the library's AA. Prints nothing per message.
const { Server } = require('node-hl7-server')

const server = new Server({ bindAddress: '127.0.0.1' })
const inbound = server.createInbound({ port: 0 }, async (req, res) => {
  await res.sendResponse('AA')
})
// The library has no accessor for the bound port; its listening socket is `_socket`.
inbound.on('listen', () => console.log(String(inbound._socket.address().port)))
inbound.on('error', (err) => {
  console.error(`server error: ${err.message}`)
  process.exit(1)
})
