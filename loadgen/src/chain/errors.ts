/** The error a hop answers with: an HTTP status, a stable code, and the OpenTelemetry `error.type` it records. */
export class HopError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errorType = code
  ) {
    super(message);
  }
}
