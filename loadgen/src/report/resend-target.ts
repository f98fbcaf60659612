/**
 * Where `hopscope-load --resend FILE` may send a spooled run, with the proxy token: only to the configured proxy
 * (`--report URL`, else $HOPSCOPE_PROXY_URL, else the default). The spool file names the proxy it was written for,
 * but a file can come from anywhere: following its URL would hand the token to whoever wrote it. A file written for
 * another proxy is refused with a message saying how to deliver it there on purpose (`--report <its proxy>`).
 */
import { UsageError } from '../load/errors';

const same = (a: string, b: string): boolean => {
  try {
    const [x, y] = [new URL(a), new URL(b)];
    return x.origin === y.origin && x.pathname.replace(/\/+$/, '') === y.pathname.replace(/\/+$/, '');
  } catch {
    return false;
  }
};

/**
 * The URL to deliver to: `configured` when `--report` was given or the file names that same proxy; otherwise a
 * UsageError (the token is never sent to a proxy only the file names).
 */
export function resendTarget(fileProxyUrl: string, configured: string, reportGiven: boolean): string {
  if (reportGiven || same(fileProxyUrl, configured)) return configured;
  throw new UsageError(
    `the spool file was written for the proxy at ${JSON.stringify(fileProxyUrl.slice(0, 200))}, not the configured one (${configured}, from --report or HOPSCOPE_PROXY_URL); the token is sent only to the configured proxy. To deliver it there, name it: --report ${fileProxyUrl.slice(0, 200)}`
  );
}
