// A node bolt: splits sentences into words, anchored to the input, storm.js style (it asks
// for task ids on every emit), and logs from initialize() before its PID.
'use strict';
const { Bolt } = require('./multilang');

class SplitBolt extends Bolt {
  initialize(conf, context, done) {
    this.log('split.js task ' + context.taskid + ' starting');
    this.crashOn = conf['test.crash_on_sentence'];
    this.marker = conf['test.crash_marker'];
    done();
  }

  process(tup, done) {
    if (this.isTick(tup)) { done(); return; }
    const [n, sentence] = tup.tuple;
    if (n === this.crashOn && this.marker && !require('fs').existsSync(this.marker)) {
      require('fs').writeFileSync(this.marker, 'crashed');
      throw new Error('split.js crashing on sentence ' + n);  // uncaught: the process dies
    }
    for (const word of sentence.split(' ')) {
      this.emit({ tuple: [word], anchors: [tup.id] }, () => {});
    }
    done();
  }
}

new SplitBolt().run();
