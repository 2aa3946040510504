// A minimal Storm multilang client for node, written for the sparkstorm examples and tests.
// It behaves like Storm's storm.js where it matters to a host: it writes the PID file before
// answering the handshake, sends raw UTF-8, pairs task-id replies with emits in FIFO order,
// and may send messages (logs, emits) before its PID when initialize() does.
'use strict';
const fs = require('fs');
const path = require('path');

function Component() {
  this.buffer = '';
  this.taskIdCallbacks = [];
  this.pendingCommands = [];
  this.setup = null;
}

Component.prototype.send = function (msg) {
  process.stdout.write(JSON.stringify(msg) + '\nend\n');
};

Component.prototype.log = function (msg, level) {
  const out = { command: 'log', msg: String(msg) };
  if (level !== undefined) out.level = level;
  this.send(out);
};

Component.prototype.emit = function (msg, callback) {
  msg.command = 'emit';
  const direct = msg.task !== undefined && msg.task !== null && msg.task !== 0;
  if (!direct && msg.need_task_ids !== false) this.taskIdCallbacks.push(callback || (() => {}));
  this.send(msg);
};

Component.prototype.run = function () {
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    this.buffer += chunk;
    let at;
    while ((at = this.buffer.indexOf('\nend\n')) >= 0) {
      const text = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + 5);
      if (text.trim()) this.dispatch(JSON.parse(text));
    }
  });
  process.stdin.on('end', () => process.exit(0));
};

Component.prototype.dispatch = function (msg) {
  if (this.setup === null) {
    this.setup = msg;
    fs.writeFileSync(path.join(msg.pidDir, String(process.pid)), '');
    this.initialize(msg.conf, msg.context, () => this.send({ pid: process.pid }));
    return;
  }
  if (Array.isArray(msg)) {
    const callback = this.taskIdCallbacks.shift();
    if (!callback) throw new Error('unsolicited task ids ' + JSON.stringify(msg));
    callback(msg);
    return;
  }
  this.handle(msg);
};

Component.prototype.initialize = function (conf, context, done) { done(); };

function Bolt() { Component.call(this); }
Bolt.prototype = Object.create(Component.prototype);
Bolt.prototype.handle = function (tup) {
  if (tup.stream === '__heartbeat' && tup.task === -1) { this.send({ command: 'sync' }); return; }
  this.process(tup, (err) => this.send({ command: err ? 'fail' : 'ack', id: tup.id }));
};
Bolt.prototype.isTick = (tup) => tup.task === -1 && tup.stream === '__tick';

function Spout() { Component.call(this); }
Spout.prototype = Object.create(Component.prototype);
Spout.prototype.handle = function (cmd) {
  const done = () => this.send({ command: 'sync' });
  const method = { next: 'nextTuple', ack: 'ack', fail: 'fail', activate: 'activate',
                   deactivate: 'deactivate' }[cmd.command];
  if (!method) { this.log('unknown command ' + cmd.command, 4); done(); return; }
  this[method](cmd.id, done);
};
Spout.prototype.activate = function (id, done) { done(); };
Spout.prototype.deactivate = function (id, done) { done(); };
Spout.prototype.ack = function (id, done) { done(); };
Spout.prototype.fail = function (id, done) { done(); };

module.exports = { Bolt, Spout };
