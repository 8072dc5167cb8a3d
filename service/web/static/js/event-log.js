// The table's event log: one list in version order, whatever path an event arrives on (the live
// stream, a move's answer, a refresh), loaded a window at a time.
//
// Events arriving only say "the log should reach version V"; the log asks the words endpoint for
// the versions it does not hold yet, (to, V], one request at a time. Arrivals during a request
// widen the next one, so concurrent batches can neither land out of order nor skip a version
// nor show one twice (each entry is kept by its version). A failed request leaves `to` where it
// was: the next arrival or refresh asks again for the same versions.
//
// At first the log holds the last WINDOW versions only; `earlier()` loads the window before.
export const WINDOW = 100;

export class EventLog {
  // askWords(after, until): a words answer for the events in (after, until] ({events,
  // events_until, seat_labels, version}); changed(answer): called after each answer is kept.
  constructor(askWords, changed) {
    this.askWords = askWords;
    this.changed = changed;
    this.entries = new Map();   // version → {version, type, text}
    this.from = null;           // the log holds every event the caller may see in (from, to]
    this.to = 0;
    this.target = 0;            // the highest version known to exist
    this.running = null;
    this.earlierRunning = null;
  }

  // The first window: the WINDOW versions up to `version`.
  open(version) {
    this.from = this.to = Math.max(0, version - WINDOW);
    return this.reach(version);
  }

  get hasEarlier() { return this.from !== null && this.from > 0; }

  // Resolves once the log holds every version up to `version` (or rejects with the words
  // endpoint's error, the versions left to ask again).
  reach(version) {
    if (this.from === null) return Promise.resolve();
    this.target = Math.max(this.target, version);
    if (!this.running) {
      this.running = this.fill().finally(() => { this.running = null; });
    }
    return this.running;
  }

  async fill() {
    while (this.to < this.target) {
      const after = this.to;
      const answer = await this.askWords(after, this.target);
      const until = Math.max(after, Math.min(answer.events_until ?? this.target, this.target));
      this.keep(answer.events || [], after, until);
      this.to = until;
      this.changed(answer);
      if (until === after) break;     // the endpoint gave nothing new: ask again on the next arrival
    }
  }

  // The window before the first one held: resolves when it is kept.
  earlier() {
    if (!this.hasEarlier) return Promise.resolve();
    if (!this.earlierRunning) {
      this.earlierRunning = (async () => {
        const until = this.from;
        let after = Math.max(0, until - WINDOW);
        const start = after;
        while (after < until) {
          const answer = await this.askWords(after, until);
          const reached = Math.max(after, Math.min(answer.events_until ?? until, until));
          this.keep(answer.events || [], after, reached);
          if (reached === after) break;
          after = reached;
        }
        this.from = start;
        this.changed(null);
      })().finally(() => { this.earlierRunning = null; });
    }
    return this.earlierRunning;
  }

  keep(events, after, until) {
    for (const e of events) {
      if (e.version > after && e.version <= until) this.entries.set(e.version, e);
    }
  }

  // Every entry held, oldest first.
  list() {
    return [...this.entries.values()].sort((a, b) => a.version - b.version);
  }
}
