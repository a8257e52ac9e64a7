'use strict'
// What the node senders share: reading the message file, the stall guard, and the report line
// (messages, elapsed_s from connect to last ACK, cpu_s of this process over that interval,
// p50_us, p99_us).
const fs = require('node:fs')

const STALL_MS = 10000

function readMessages (file) {
  const text = fs.readFileSync(file, 'latin1')
  const starts = []
  const re = /(?:^|(?<=[\r\n]))MSH\|/g
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index)
  starts.push(text.length)
  const messages = []
  for (let i = 0; i + 1 < starts.length; i++) {
    messages.push(text.slice(starts[i], starts[i + 1]).replace(/\n+$/, ''))
  }
  return messages
}

function controlId (message) {
  return message.split('\r', 1)[0].split('|')[9]
}

let failed = false

// The first failure is the reason; what follows from it is not reported.
function fail (why) {
  if (failed) return
  failed = true
  process.stderr.write(why + '\n', () => process.exit(1))
}

class Run {
  constructor (messages) {
    this.ids = messages.map(controlId)
    this.count = messages.length
    this.sentAt = new Array(this.count)
    this.latencies = []
    this.acked = 0
    this.startCpu = process.cpuUsage()
    this.start = process.hrtime.bigint()
    this.lastProgress = Date.now()
    this.stallTimer = setInterval(() => {
      if (Date.now() - this.lastProgress > STALL_MS) {
        fail(`stalled: no ACK for ${STALL_MS / 1000} s after ${this.acked} of ${this.count} ACKs`)
      }
    }, 500)
  }

  sent (i) { this.sentAt[i] = process.hrtime.bigint() }

  // One ACK, in order: AA naming the MSH-10 of the next unacknowledged message.
  ack (code, named) {
    const i = this.acked
    if (i >= this.count) return fail(`an ACK arrived for no message after ${i} ACKs`)
    if (code !== 'AA' || named !== this.ids[i]) {
      return fail(`ACK ${i + 1} is ${JSON.stringify(code)} naming ${JSON.stringify(named)}, not AA naming ${JSON.stringify(this.ids[i])}`)
    }
    this.latencies.push(Number(process.hrtime.bigint() - this.sentAt[i]) / 1e3)
    this.acked++
    this.lastProgress = Date.now()
  }

  done () { return this.acked === this.count }

  report () {
    clearInterval(this.stallTimer)
    const elapsed = Number(process.hrtime.bigint() - this.start) / 1e9
    const cpu = process.cpuUsage(this.startCpu)
    const l = this.latencies.sort((a, b) => a - b)
    const pct = (p) => l[Math.max(0, Math.ceil(l.length * p) - 1)]
    console.log(JSON.stringify({
      messages: this.count,
      elapsed_s: elapsed,
      cpu_s: (cpu.user + cpu.system) / 1e6,
      p50_us: pct(0.5),
      p99_us: pct(0.99)
    }))
  }
}

module.exports = { readMessages, fail, Run }
