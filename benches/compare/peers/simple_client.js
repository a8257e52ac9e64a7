'use strict'
// simple-hl7's TCP client as a benchmark sender: `simple_client.js PORT FILE WINDOW`. Sends the
// messages of FILE with the library's send, at most WINDOW unacknowledged, each ACK as the
// library parsed it; prints the report line of common.js or fails with the reason (the library
// itself refuses a send while an ACK is awaited).
const hl7 = require('simple-hl7')
const { readMessages, fail, Run } = require('./common.js')

const [port, file, window] = process.argv.slice(2)
const texts = readMessages(file)
const limit = Math.max(1, Number(window))
let run
let sent = 0

const client = hl7.Server.createTcpClient({ host: '127.0.0.1', port: Number(port), keepalive: true })

function onAck (err, ack) {
  if (err) return fail(`client error after ${run.acked} ACKs: ${err.message}`)
  const msa = ack.getSegment('MSA')
  run.ack(msa.getField(1).toString(), msa.getField(2).toString())
  if (run.done()) {
    run.report()
    client.close()
    process.exit(0)
  }
  // The library clears its awaiting-response flag only after this callback returns.
  setImmediate(pump)
}

function pump () {
  while (sent < texts.length && sent - run.acked < limit) {
    const i = sent++
    run.sent(i)
    client.send(texts[i], onAck)
  }
}

client.connect((err) => {
  if (err) return fail(`connect: ${err.message}`)
  client.callback = onAck
  run = new Run(texts)
  pump()
})
