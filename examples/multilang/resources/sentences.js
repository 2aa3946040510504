// A node spout: emits numbered sentences (message id = the number, non-ASCII included) and
// replays failed ones; conf sentences.count bounds the stream.
'use strict';
const { Spout } = require('./multilang');
const SENTENCES = ['the cow jumped over the moon', 'an apple a day keeps the doctor away',
  'four score and seven years ago', 'snow white and the seven dwarfs',
  'i am at two with nature', 'crème brûlée für alle'];

class SentenceSpout extends Spout {
  initialize(conf, context, done) {
    this.total = conf['sentences.count'];
    this.n = 0;
    this.replay = [];
    done();
  }

  nextTuple(id, done) {
    let n;
    if (this.replay.length) n = this.replay.shift();
    else if (this.total === undefined || this.n < this.total) n = this.n++;
    if (n === undefined) { setTimeout(done, 1); return; }
    this.emit({ tuple: [n, SENTENCES[n % SENTENCES.length]], id: n }, () => done());
  }

  ack(id, done) { done(); }

  fail(id, done) { this.replay.push(id); done(); }
}

new SentenceSpout().run();
