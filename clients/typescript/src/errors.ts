/** Errors of the regista client. */

/** The server could not be reached, or refused what was asked (its message, as it said it). */
export class RegistaError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RegistaError";
  }
}

/**
 * The agent left the recorded path: the message is the one `regista test` prints for the
 * same run (file, step, field and the character where it differs).
 */
export class TapeMismatch extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TapeMismatch";
  }
}
