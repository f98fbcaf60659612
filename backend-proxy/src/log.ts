/** pino logger for the proxy; quiet in tests unless HOPSCOPE_LOG_LEVEL says otherwise. */
import pino from 'pino';

export function makeLogger(level: string): pino.Logger {
  return pino({ name: 'hopscope-proxy', level, base: { svc: 'backend-proxy' } });
}
