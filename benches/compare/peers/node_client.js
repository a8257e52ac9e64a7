'use strict'
// node-hl7-client as a benchmark sender: `node_client.js PORT FILE WINDOW`. Sends the messages
// of FILE, at most WINDOW unacknowledged, each built with the library's Message and each ACK as
// the library parsed it; prints the report line of common.js or fails with the reason.
const { Client, Message } = require('node-hl7-client')
const { readMessages, fail, Run } = require('./common.js')

const [port, file, window] = process.argv.slice(2)
const texts = readMessages(file)
const limit = Math.max(1, Number(window))
let run
let sent = 0

const client = new Client({ host: '127.0.0.1' })
const connection = client.createConnection({ port: Number(port) }, async (res) => {
  const ack = res.getMessage()
  run.ack(ack.get('MSA.1').toString(), ack.get('MSA.2').toString())
  if (run.done()) {
    run.report()
    await connection.close()
    process.exit(0)
  }
  pump()
})
connection.on('client.error', (err) => fail(`client error: ${err.message}`))

function pump () {
  while (sent < texts.length && sent - run.acked < limit) {
    const i = sent++
    const message = new Message({ text: texts[i] })
    run.sent(i)
    connection.sendMessage(message).catch((err) => fail(`send ${i + 1}: ${err.message}`))
  }
}

connection.once('connect', () => {
  run = new Run(texts)
  pump()
})
