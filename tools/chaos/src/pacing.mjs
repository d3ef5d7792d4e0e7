// The pace of the fault suite's load: a few lanes, each sending one request at a time, together
// starting no more than a given number of new requests a second.

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @param {object} options
 * @param {number} options.lanes          requests in flight at most
 * @param {number} options.ratePerSecond  new requests a second at most
 * @param {() => Promise<unknown>} options.next  sends a lane's next request
 */
export function createPacer({ lanes, ratePerSecond, next }) {
  let stopping = false;
  let nextStartAt = Date.now();
  /** @type {Set<Promise<unknown>>} */
  const running = new Set();

  /**
   * Counts `promise` among the work `stop` waits for.
   * @template T
   * @param {Promise<T>} promise
   * @returns {Promise<T>}
   */
  const keep = (promise) => {
    running.add(promise);
    void promise.finally(() => running.delete(promise));
    return promise;
  };

  async function lane() {
    while (!stopping) {
      const now = Date.now();
      const startAt = Math.max(now, nextStartAt);
      nextStartAt = startAt + 1000 / ratePerSecond;
      if (startAt > now) await sleep(startAt - now);
      if (stopping) break;
      await next();
    }
  }

  return {
    keep,

    /** Starts the lanes. */
    start() {
      stopping = false;
      nextStartAt = Date.now();
      for (let i = 0; i < lanes; i += 1) keep(lane());
    },

    /** Stops starting new requests and waits for those under way (and their resends). */
    async stop() {
      stopping = true;
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
