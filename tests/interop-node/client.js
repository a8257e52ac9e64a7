'use strict'
// node-hl7-client as an MLLP sender for the interop tests: connects to 127.0.0.1:argv[2], sends
// the messages of the file argv[3] (separated by a blank line) one at a time, each after the
// previous one's ACK, and prints per message `SENT <base64 of the payload it framed>` and then
// `ACK <MSA-1> <MSA-2>` as the library parsed the ACK.
const fs = require('node:fs')
const { Client, Message } = require('node-hl7-client')

// The library's reader parses one ACK per socket read and its `waitAck` does not hold a send
// back, so pipelining is not something it supports: wait for each ACK here.
const [port, file] = process.argv.slice(2)
const texts = fs.readFileSync(file, 'utf8').split('\n\n')

setTimeout(() => {
  console.error('node-hl7-client: timed out')
  process.exit(2)
}, 10000).unref()

let onAck = () => {}
const client = new Client({ host: '127.0.0.1' })
const connection = client.createConnection({ port: Number(port) }, async (res) => {
  const ack = res.getMessage()
  console.log(`ACK ${ack.get('MSA.1').toString()} ${ack.get('MSA.2').toString()}`)
  onAck()
})
connection.on('client.error', (err) => console.error(`client error: ${err.message}`))

async function main () {
  await new Promise((resolve) => connection.once('connect', resolve))
  for (const text of texts) {
    const message = new Message({ text })
    const acked = new Promise((resolve) => { onAck = resolve })
    console.log(`SENT ${Buffer.from(message.toString(), 'utf8').toString('base64')}`)
    await connection.sendMessage(message)
    await acked
  }
  await connection.close()
  process.exit(0)
}

main().catch((err) => {
  console.error(`node-hl7-client: ${err.message}`)
  process.exit(1)
})
