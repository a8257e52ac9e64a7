'use strict'
// simple-hl7's TCP server as a benchmark receiver: prints its port, and answers every message
// its handler is given with the library's own ACK (AA naming the MSH-10). Prints nothing per
// message. The library listens on all addresses; this binds it to 127.0.0.1 instead.
const net = require('node:net')
const hl7 = require('simple-hl7')

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (port) { return listen.call(this, port, '127.0.0.1') }

const server = hl7.Server.createTcpServer((err, req, res) => {
  if (err) {
    console.error(`server error: ${err.message}`)
    return
  }
  res.end()
})
server.start(0)
server.server.on('listening', () => console.log(String(server.server.address().port)))
