// The oldest Node.js Herald runs on: 24.11.0, the first release of the 24 LTS line (Node 20 is
// past its end of life). The `engines` of every package.json and with-node24.sh, which every root
// npm script runs through, say the same (with-node24.test.mjs checks).

export const NODE_FLOOR = '24.11.0';

/**
 * Whether a Node.js version ('v24.11.0', '24.11.0' or process.version) is at least NODE_FLOOR;
 * false for anything that is not a version.
 * @param {string} version
 */
export function meetsNodeFloor(version) {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version)?.slice(1).map(Number);
  if (!parts) return false;
  const floor = NODE_FLOOR.split('.').map(Number);
  for (let i = 0; i < 3; i += 1) {
    if (parts[i] !== floor[i]) return parts[i] > floor[i];
  }
  return true;
}

/** The message of a process started on an older Node.js than NODE_FLOOR. */
export function nodeFloorMessage(version = process.version) {
  return (
    `Node.js ${NODE_FLOOR} or newer is needed (this is ${version}); the npm scripts bring it ` +
    '(npm start, npm test, …), or run the command through sh tools/stack/src/with-node24.sh'
  );
}
