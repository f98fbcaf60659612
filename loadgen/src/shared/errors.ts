/**
 * The error answer both wings agree on: OpenAI's `{"error": {"code", "message"}}`. The chain's hops and control API
 * write it; the driver reads the code back into a request's detail (`http_503 engine_overloaded`).
 */

export interface ErrorBody {
  error: { code: string; message: string };
}

export function errorBody(code: string, message: string): ErrorBody {
  return { error: { code, message } };
}

/** `{error: {code}}` of an error answer's text, when it has one. */
export function errorCode(text: string): string | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const code = JSON.parse(text)?.error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}
