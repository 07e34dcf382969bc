/**
 * regista's client for Node agents: replays and signal-mode forks of recorded runs, and
 * tape tests for vitest, jest and node's own test runner. No runtime dependency beyond
 * `fetch`; `@anthropic-ai/sdk` and `openai` are the clients it wraps, when you use them.
 */

export { RegistaError, TapeMismatch } from "./errors";
export {
  ReplaySession,
  isLiveSignal,
  type Edit,
  type ForkResult,
  type ReplayOptions,
  type ReplayStatus,
  type RunSummary,
  type WithOptions,
} from "./replay";
export { startServer, type LocalServer, type ServerOptions } from "./server";
export { playTape, tapeTest, type TapeOptions } from "./tape";
